import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { closeServers, listenLoopback } from '../../test/support/loopback-server.js';
import { MAX_STREAM_STDIN_BYTES, StreamClientMessageSchema } from '../protocol/index.js';
import type { StreamClientMessage, StreamMessage } from '../protocol/index.js';
import { AgentctlHttpError, AgentctlUnreachableError } from './errors.js';
import { InstanceClient } from './instance.js';

const TOKEN = 'c'.repeat(64);

afterEach(closeServers);

/**
 * A loopback stream endpoint that records the client frames it receives and hands each socket
 * to `onDial`; `refuse` answers the upgrade with that HTTP status, `http` answers the probe.
 */
async function serve(options: {
  onDial?: (ws: WebSocket, received: StreamClientMessage[]) => void;
  onFrame?: (ws: WebSocket, message: StreamClientMessage, received: StreamClientMessage[]) => void;
  refuse?: number;
  http?: (req: IncomingMessage, res: ServerResponse) => void;
}): Promise<{ url: string; received: StreamClientMessage[]; dials: IncomingMessage[] }> {
  const received: StreamClientMessage[] = [];
  const dials: IncomingMessage[] = [];
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer((req, res) => {
    if (options.http) options.http(req, res);
    else res.writeHead(500).end();
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    dials.push(req);
    if (options.refuse !== undefined) {
      socket.end(`HTTP/1.1 ${options.refuse} Refused\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', (raw) => {
        const message = StreamClientMessageSchema.parse(JSON.parse(String(raw)));
        received.push(message);
        options.onFrame?.(ws, message, received);
      });
      options.onDial?.(ws, received);
    });
  });
  return { url: await listenLoopback(server), received, dials };
}

const send = (ws: WebSocket, ...messages: StreamMessage[]): void => {
  for (const m of messages) ws.send(JSON.stringify(m));
};
const output = (seq: number, text: string): StreamMessage => ({
  type: 'output',
  chunk: { seq, stream: 'stdout', data: Buffer.from(text).toString('base64'), at: '2026-01-01T00:00:00Z' },
});

function client(url: string): InstanceClient {
  return new InstanceClient({ baseUrl: url, token: TOKEN, instanceId: 'task-1', retry: { attempts: 1 }, timeoutMs: 2000 });
}

async function collect(iterable: AsyncIterable<StreamMessage>): Promise<StreamMessage[]> {
  const out: StreamMessage[] = [];
  for await (const m of iterable) out.push(m);
  return out;
}

const stdinText = (received: StreamClientMessage[]): string =>
  received.map((m) => (m.type === 'stdin' ? Buffer.from(m.data, 'base64').toString() : '')).join('');

describe('InstanceClient.attach', () => {
  it('sends input written before the socket opened, in order, and yields output until exit', async () => {
    // An echo process: every stdin frame comes back as output; eof makes it exit.
    let seq = 0;
    const { url, received, dials } = await serve({
      onFrame: (ws, m) => {
        if (m.type === 'stdin') send(ws, output(seq++, Buffer.from(m.data, 'base64').toString()));
        if (m.type === 'eof') send(ws, { type: 'exit', exit_code: 0, signal: null, next: seq });
      },
    });
    const attachment = client(url).attach('p1', { from: 0 });
    expect(attachment.write('one ')).toBe(true);
    expect(attachment.write(new TextEncoder().encode('two'))).toBe(true);
    expect(attachment.end()).toBe(true);
    const messages = await collect(attachment);
    expect(messages.map((m) => m.type)).toEqual(['output', 'output', 'exit']);
    expect(received.map((m) => m.type)).toEqual(['stdin', 'stdin', 'eof']);
    expect(stdinText(received)).toBe('one two');
    expect(attachment.position).toBe(2);
    expect(dials[0]?.headers).toMatchObject({ authorization: `Bearer ${TOKEN}`, 'x-instance-id': 'task-1' });
    expect(attachment.write('late'), 'input after the exit is refused, not sent').toBe(false);
  });

  it('splits large input into frames of at most MAX_STREAM_STDIN_BYTES', async () => {
    const { url, received } = await serve({
      onFrame: (ws, m) => {
        if (m.type === 'eof') send(ws, { type: 'exit', exit_code: 0, signal: null, next: 0 });
      },
    });
    const attachment = client(url).attach('p1');
    const big = new Uint8Array(MAX_STREAM_STDIN_BYTES * 2 + 5).fill(65);
    attachment.write(big);
    attachment.end();
    await collect(attachment);
    const sizes = received.flatMap((m) => (m.type === 'stdin' ? [Buffer.from(m.data, 'base64').length] : []));
    expect(sizes).toEqual([MAX_STREAM_STDIN_BYTES, MAX_STREAM_STDIN_BYTES, 5]);
  });

  it('sends signals and yields error answers without ending the iteration', async () => {
    const { url, received } = await serve({
      onFrame: (ws, m) => {
        if (m.type === 'stdin') send(ws, { type: 'error', code: 'conflict', message: 'stdin of process p1 is closed' });
        if (m.type === 'signal') send(ws, { type: 'exit', exit_code: null, signal: m.signal, next: 0 });
      },
    });
    const attachment = client(url).attach('p1');
    attachment.write('x');
    const seen: StreamMessage[] = [];
    for await (const m of attachment) {
      seen.push(m);
      if (m.type === 'error') attachment.kill('SIGTERM');
    }
    expect(seen).toEqual([
      { type: 'error', code: 'conflict', message: 'stdin of process p1 is closed' },
      { type: 'exit', exit_code: null, signal: 'SIGTERM', next: 0 },
    ]);
    expect(received.at(-1)).toEqual({ type: 'signal', signal: 'SIGTERM' });
  });

  it('ends quietly on close() and on abort, leaving the process alone', async () => {
    const { url } = await serve({ onDial: (ws) => send(ws, output(0, 'hi')) });
    const attachment = client(url).attach('p1');
    const seen: StreamMessage[] = [];
    for await (const m of attachment) {
      seen.push(m);
      attachment.close();
    }
    expect(seen).toHaveLength(1);
    expect(attachment.write('x')).toBe(false);

    const abort = new AbortController();
    const aborted = client(url).attach('p1', { signal: abort.signal });
    const done = collect(aborted);
    abort.abort();
    await expect(done).resolves.toBeInstanceOf(Array);
  });

  it('fails with AgentctlUnreachableError (maybe applied) when the socket drops before the exit', async () => {
    const { url } = await serve({ onDial: (ws) => setTimeout(() => ws.terminate(), 10) });
    const err = await collect(client(url).attach('p1')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentctlUnreachableError);
    expect(err).toMatchObject({ mayHaveBeenApplied: true });
  });

  it('reports a refused upgrade with the typed error of the HTTP probe', async () => {
    const { url } = await serve({
      refuse: 404,
      http: (_req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'not_found', message: 'no process p1' } })),
    });
    const err = await collect(client(url).attach('p1')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentctlHttpError);
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
  });
});
