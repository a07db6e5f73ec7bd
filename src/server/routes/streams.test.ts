import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { OutputChunkView } from '../../controller/index.js';
import { streamRoutes } from './streams.js';
import type { ApiHandler, ApiService } from './types.js';
import { workspaceRoutes } from './workspace.js';

const ID = 's-0123456789';

/** Just what the streaming routes call: a ready session whose agent said one line. */
const service = {
  get: async () => ({ id: ID, state: 'ready', error: null, stages: [] }),
  list: async () => [],
  subscribe: () => () => undefined,
  async *logs(): AsyncIterable<OutputChunkView> {
    yield { seq: 0, stream: 'stdout', data: Buffer.from('hi\n') } as unknown as OutputChunkView;
  },
  exec: async () => ({ exitCode: 0, signal: null }),
} as unknown as ApiService;

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** `handler` alone on a loopback server; the response's headers (its body is not read). */
async function headersOf(handler: ApiHandler, method = 'GET', body?: string): Promise<Headers> {
  const server = createServer((req, res) => {
    void handler({ req, res, url: new URL(req.url ?? '/', 'http://localhost'), params: { id: ID }, caller: null });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x?follow=true`, { method, ...(body ? { body, headers: { 'content-type': 'application/json' } } : {}) });
  expect(res.status).toBe(200);
  await res.body?.cancel();
  return res.headers;
}

describe('streaming responses behind a proxy', () => {
  const streams = streamRoutes({ service, keepAliveMs: 60_000 });
  const workspace = workspaceRoutes({ service, keepAliveMs: 60_000 });

  it.each([
    ['logs (NDJSON)', () => headersOf(streams.logs)],
    ['events (SSE)', () => headersOf(streams.events)],
    ['all events (SSE)', () => headersOf(streams.allEvents)],
    ['exec (NDJSON)', () => headersOf(workspace.exec, 'POST', JSON.stringify({ argv: ['true'] }))],
  ])('%s says x-accel-buffering: no, so nginx never holds its lines back', async (_what, headers) => {
    expect((await headers()).get('x-accel-buffering')).toBe('no');
  });
});
