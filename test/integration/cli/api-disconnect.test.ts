/**
 * Streams whose client goes away before the stream starts: the SSE subscription and the NDJSON
 * log stream must still end (no leaked listener, keep-alive interval or follow stream).
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'vitest';
import { createApiServer } from '../../../src/server/server.js';
import type { OutputChunkView, SessionService, SessionView } from '../../../src/controller/service.js';

const VIEW = {
  id: 's-1',
  name: null,
  state: 'ready',
  agent: 'demo',
  executor: 'local',
  repository: { path: '/repo' },
  error: null,
  stages: [],
  workspacePath: null,
  agentProcess: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
} as unknown as SessionView;

/** A service whose `get` waits until the test lets it answer. */
function slowService() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let getCalls = 0;
  const state = { subscribers: 0, openLogStreams: 0 };
  const service = {
    // 's-1' is not id-shaped: the server looks it up among the sessions before calling get
    async list(): Promise<SessionView[]> {
      return [VIEW];
    },
    async get(): Promise<SessionView> {
      getCalls++;
      await gate;
      return VIEW;
    },
    subscribe(): () => void {
      state.subscribers++;
      return () => void state.subscribers--;
    },
    async *logs(_id: string, opts: { signal?: AbortSignal }): AsyncIterable<OutputChunkView> {
      state.openLogStreams++;
      try {
        // a follow stream of an agent that stays quiet: ends only when the request is aborted
        await new Promise<void>((resolve) => {
          if (opts.signal?.aborted) resolve();
          opts.signal?.addEventListener('abort', () => resolve(), { once: true });
        });
      } finally {
        state.openLogStreams--;
      }
      yield* [];
    },
  } as unknown as SessionService;
  return { service, state, release, getCalls: () => getCalls };
}

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('API streams whose client disconnects early', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  async function serve(service: SessionService): Promise<number> {
    const server = createApiServer({ service, token: 't', version: 'test', keepAliveMs: 20 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    close = async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    };
    return (server.address() as AddressInfo).port;
  }

  /** Opens a GET, waits until the server is inside `get`, then drops the connection. */
  async function openAndDrop(port: number, path: string, getCalls: () => number): Promise<void> {
    const req = request({ host: '127.0.0.1', port, path, headers: { authorization: 'Bearer t' } });
    req.on('error', () => undefined);
    req.end();
    await until(() => getCalls() > 0);
    req.destroy();
    await new Promise((r) => setTimeout(r, 50)); // let the server see the close
  }

  it('events: unsubscribes when the client left while the snapshot was being read', async () => {
    const svc = slowService();
    const port = await serve(svc.service);
    await openAndDrop(port, '/api/v1/sessions/s-1/events', svc.getCalls);
    svc.release();
    await until(() => svc.state.subscribers === 0);
  });

  it('logs -f: ends the follow stream when the client left before it started', async () => {
    const svc = slowService();
    const port = await serve(svc.service);
    await openAndDrop(port, '/api/v1/sessions/s-1/logs?follow=true', svc.getCalls);
    svc.release();
    await new Promise((r) => setTimeout(r, 100));
    await until(() => svc.state.openLogStreams === 0);
  });
});
