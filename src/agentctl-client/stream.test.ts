import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { closeServers, listenLoopback } from '../../test/support/loopback-server.js';
import type { StreamMessage } from '../protocol/index.js';
import { AgentctlHttpError, AgentctlStreamError, AgentctlUnreachableError } from './errors.js';
import { InstanceClient } from './instance.js';
import { outputText } from './output.js';

const TOKEN = 'b'.repeat(64);
const FAST = { attempts: 4, initialDelayMs: 1, maxDelayMs: 5 };

const chunk = (seq: number): StreamMessage => ({
  type: 'output',
  chunk: { seq, stream: 'stdout', data: Buffer.from(`line ${seq}\n`).toString('base64'), at: '2026-01-01T00:00:00Z' },
});
const exit = (next: number): StreamMessage => ({ type: 'exit', exit_code: 0, signal: null, next });
const processInfo = {
  id: 'p1',
  kind: 'process',
  command: ['x'],
  cwd: '.',
  status: 'running',
  pid: 1,
  exit_code: null,
  signal: null,
  started_at: '2026-01-01T00:00:00Z',
  ended_at: null,
  next_seq: 0,
  orphaned: false,
};

interface Dial {
  from: number;
  headers: IncomingMessage['headers'];
}
/** What the fake stream endpoint does with the n-th dial (0-based). */
type OnDial = (n: number, ws: WebSocket, dial: Dial) => void;

afterEach(closeServers);

/**
 * A loopback instance server: the stream route upgrades and hands the socket to `onDial` (or
 * answers `refuse` with an HTTP status); every other request gets `http`.
 */
async function serve(options: {
  onDial: OnDial;
  refuse?: (n: number) => number | undefined;
  http?: (req: IncomingMessage, res: ServerResponse) => void;
}): Promise<{ url: string; dials: Dial[] }> {
  const dials: Dial[] = [];
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer((req, res) => {
    if (options.http) options.http(req, res);
    else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(processInfo));
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const dial = { from: Number(url.searchParams.get('from')), headers: req.headers };
    const n = dials.push(dial) - 1;
    const status = options.refuse?.(n);
    if (status !== undefined) {
      socket.end(`HTTP/1.1 ${status} Refused\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => options.onDial(n, ws, dial));
  });
  return { url: await listenLoopback(server), dials };
}

const send = (ws: WebSocket, ...messages: StreamMessage[]): void => {
  for (const m of messages) ws.send(JSON.stringify(m));
};

function client(url: string): InstanceClient {
  return new InstanceClient({ baseUrl: url, token: TOKEN, instanceId: 'task-1', retry: { attempts: 1 } });
}

async function collect(iterable: AsyncIterable<StreamMessage>): Promise<StreamMessage[]> {
  const out: StreamMessage[] = [];
  for await (const m of iterable) out.push(m);
  return out;
}

const seqs = (messages: StreamMessage[]): number[] =>
  messages.flatMap((m) => (m.type === 'output' ? [m.chunk.seq] : []));

describe('InstanceClient.streamOutput', () => {
  it('resumes after a dropped connection from the last seq + 1, without duplicates or loss', async () => {
    const { url, dials } = await serve({
      onDial: (n, ws) => {
        if (n === 0) {
          send(ws, chunk(0), chunk(1), chunk(2), chunk(3), chunk(4));
          // Dropped mid-stream, after the frames are flushed.
          setTimeout(() => ws.terminate(), 20);
        } else {
          // The server replays from an earlier point than asked: the client drops the repeats.
          send(ws, chunk(3), chunk(4), chunk(5), chunk(6), chunk(7), exit(8));
        }
      },
    });
    const stream = client(url).streamOutput('p1', { reconnect: FAST });
    const messages = await collect(stream);
    expect(seqs(messages)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(messages.at(-1)).toEqual(exit(8));
    expect(dials.map((d) => d.from)).toEqual([0, 5]);
    expect(stream.position).toBe(8);
    expect(outputText(messages.flatMap((m) => (m.type === 'output' ? [m.chunk] : [])))).toContain('line 7\n');
  });

  it('sends the token and instance id on every dial and starts at `from`', async () => {
    const { url, dials } = await serve({ onDial: (_n, ws) => send(ws, chunk(7), exit(8)) });
    await collect(client(url).streamOutput('p1', { from: 7 }));
    expect(dials[0]).toMatchObject({
      from: 7,
      headers: { authorization: `Bearer ${TOKEN}`, 'x-instance-id': 'task-1' },
    });
  });

  it('surfaces a gap and continues after it', async () => {
    const { url } = await serve({ onDial: (_n, ws) => send(ws, { type: 'gap', from: 0, to: 3 }, chunk(3), exit(4)) });
    const stream = client(url).streamOutput('p1');
    const messages = await collect(stream);
    expect(messages.map((m) => m.type)).toEqual(['gap', 'output', 'exit']);
    expect(stream.position).toBe(4);
  });

  it('ends quietly when aborted', async () => {
    const { url } = await serve({ onDial: (_n, ws) => send(ws, chunk(0)) });
    const controller = new AbortController();
    const seen: number[] = [];
    for await (const m of client(url).streamOutput('p1', { signal: controller.signal })) {
      if (m.type === 'output') seen.push(m.chunk.seq);
      controller.abort();
    }
    expect(seen).toEqual([0]);
  });

  it('closes the socket when the consumer stops early', async () => {
    let closed = false;
    const { url } = await serve({
      onDial: (_n, ws) => {
        ws.on('close', () => (closed = true));
        send(ws, chunk(0), chunk(1));
      },
    });
    for await (const m of client(url).streamOutput('p1')) {
      if (m.type === 'output') break;
    }
    await expect.poll(() => closed).toBe(true);
  });

  it('throws the typed HTTP error when a re-dial is refused (401 after agentctl restarted)', async () => {
    const { url, dials } = await serve({
      onDial: (_n, ws) => {
        send(ws, chunk(0));
        setTimeout(() => ws.terminate(), 20);
      },
      refuse: (n) => (n > 0 ? 401 : undefined),
      http: (_req, res) =>
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { code: 'unauthorized', message: 'invalid auth token' } })),
    });
    const stream = client(url).streamOutput('p1', { reconnect: FAST });
    const seen: StreamMessage[] = [];
    const err = await (async () => {
      for await (const m of stream) seen.push(m);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentctlHttpError);
    expect(err).toMatchObject({ status: 401, code: 'unauthorized' });
    expect((err as Error).message).not.toContain(TOKEN);
    expect(seqs(seen)).toEqual([0]);
    expect(stream.position).toBe(1);
    expect(dials).toHaveLength(2);
  });

  it('gives up after the configured dials without progress', async () => {
    const { url, dials } = await serve({ onDial: (_n, ws) => ws.terminate() });
    const err = await collect(client(url).streamOutput('p1', { reconnect: { ...FAST, attempts: 3 } })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AgentctlUnreachableError);
    expect((err as Error).message).toMatch(/^agentctl WS \/api\/v1\/processes\/p1\/stream: unreachable: stream lost 3 times/);
    expect(dials).toHaveLength(3);
  });

  it('throws a stream error message with a non-transient code', async () => {
    const { url } = await serve({
      onDial: (_n, ws) => ws.send(JSON.stringify({ type: 'error', code: 'not_found', message: `no process ${TOKEN}` })),
    });
    const err = await collect(client(url).streamOutput('p1')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentctlStreamError);
    expect(err).toMatchObject({ code: 'not_found' });
    expect((err as Error).message).not.toContain(TOKEN);
  });

  it('re-dials when the heartbeat probe finds agentctl unreachable', async () => {
    let probes = 0;
    const { url, dials } = await serve({
      onDial: (n, ws) => (n === 0 ? send(ws, chunk(0)) : send(ws, chunk(1), exit(2))),
      http: (req, res) => {
        probes++;
        // A silently broken forward: the probe's connection is reset.
        res.socket?.destroy();
      },
    });
    const messages = await collect(client(url).streamOutput('p1', { heartbeatMs: 50, reconnect: FAST }));
    expect(seqs(messages)).toEqual([0, 1]);
    expect(dials.map((d) => d.from)).toEqual([0, 1]);
    expect(probes).toBeGreaterThan(0);
  });
});
