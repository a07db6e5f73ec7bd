import { describe, expect, it } from 'vitest';
import { Connection } from './connection.js';
import { InboundBudget, frameSize } from './inbound-budget.js';
import type { WebSocketLike } from './websocket.js';

describe('InboundBudget', () => {
  it('pauses above the high-water mark once, and resumes at half of it', () => {
    const b = new InboundBudget(100, 1000);
    expect(b.add(60)).toBeNull();
    expect(b.add(60)).toBe('pause');
    expect(b.add(60)).toBeNull();
    expect(b.take(60)).toBeNull();
    expect(b.take(60)).toBeNull();
    expect(b.take(20)).toBe('resume');
    expect(b.paused).toBe(false);
    expect(b.queued).toBe(40);
  });

  it('asks to cut the dial past the hard cap', () => {
    const b = new InboundBudget(100, 300);
    expect(b.add(200)).toBe('pause');
    expect(b.add(200)).toBe('cut');
    expect(b.clear()).toBe('resume');
    expect(b.queued).toBe(0);
  });

  it('refuses a cap below the high-water mark', () => {
    expect(() => new InboundBudget(100, 50)).toThrow(TypeError);
  });

  it.each([
    ['abc', 3],
    [new Uint8Array(7), 7],
    [new ArrayBuffer(5), 5],
    [[new Uint8Array(2), new Uint8Array(3)], 5],
    [{}, 0],
  ])('frameSize(%o) is %d', (data, size) => {
    expect(frameSize(data)).toBe(size);
  });
});

/** A socket whose events the test fires by hand; `pause`/`resume` are counted when `canPause`. */
function fakeSocket(canPause: boolean): WebSocketLike & { pauses: number; resumes: number } {
  const s = {
    onopen: null,
    onmessage: null,
    onclose: null,
    onerror: null,
    pauses: 0,
    resumes: 0,
    close: () => undefined,
    send: () => undefined,
  } as WebSocketLike & { pauses: number; resumes: number };
  if (canPause) {
    s.pause = () => void s.pauses++;
    s.resume = () => void s.resumes++;
  }
  return s;
}

const options = { signal: undefined, openTimeoutMs: 60_000, heartbeatMs: 0, probe: async () => undefined, budget: { highWaterBytes: 1000, hardCapBytes: 4000 } };

describe('Connection with a consumer that does not pull', () => {
  it('pauses the socket instead of queueing without bound, and resumes once the consumer catches up', async () => {
    const socket = fakeSocket(true);
    const conn = new Connection(socket, options);
    for (let i = 0; i < 15; i++) socket.onmessage?.({ data: 'x'.repeat(100) });
    expect(socket.pauses).toBe(1);
    expect(socket.resumes).toBe(0);
    for (let i = 0; i < 10; i++) expect((await conn.next()).kind).toBe('message');
    expect(socket.resumes).toBe(1);
    conn.dispose();
  });

  it('cuts a socket that cannot pause past the hard cap, dropping what was not pulled', async () => {
    const socket = fakeSocket(false);
    const conn = new Connection(socket, options);
    for (let i = 0; i < 50; i++) socket.onmessage?.({ data: 'x'.repeat(100) });
    const event = await conn.next();
    expect(event.kind).toBe('closed');
    expect(event.kind === 'closed' && event.detail).toMatch(/^the reader fell \d+ bytes behind the socket$/);
    conn.dispose();
  });
});
