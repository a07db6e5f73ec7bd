import { describe, expect, it } from 'vitest';
import { BerthClient, type WebSocketLike } from './api-client.js';
import { MAX_SHELL_FRAME_BYTES, ShellClientMessageSchema } from './schemas.js';

/** An open socket that records the frames sent on it. */
function recordingSocket(): { socket: WebSocketLike; frames: string[] } {
  const frames: string[] = [];
  const socket: WebSocketLike = {
    readyState: 1,
    send: (data) => void frames.push(data),
    close: () => undefined,
    onopen: null,
    onmessage: null,
    onclose: null,
    onerror: null,
  };
  return { socket, frames };
}

describe('BerthClient.shell', () => {
  it('splits a paste larger than a frame may be into in-order stdin frames under the server limit', () => {
    const { socket, frames } = recordingSocket();
    const client = new BerthClient({ baseUrl: 'http://127.0.0.1:7420', token: 't', webSocket: () => socket });
    const conn = client.shell('s1', { rows: 24, cols: 80, onOutput: () => undefined });
    conn.done.catch(() => undefined);
    const paste = new Uint8Array(3 * MAX_SHELL_FRAME_BYTES + 7).map((_, i) => i % 251);
    conn.write(paste);
    expect(frames.length).toBeGreaterThan(3);
    const received: Buffer[] = [];
    for (const frame of frames) {
      expect(Buffer.byteLength(frame)).toBeLessThan(MAX_SHELL_FRAME_BYTES);
      const msg = ShellClientMessageSchema.parse(JSON.parse(frame));
      if (msg.type !== 'stdin') throw new Error(`unexpected ${msg.type} frame`);
      received.push(Buffer.from(msg.data, 'base64'));
    }
    expect(Buffer.concat(received).equals(Buffer.from(paste))).toBe(true);
  });
});
