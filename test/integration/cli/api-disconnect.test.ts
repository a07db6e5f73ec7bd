/**
 * Streams whose client goes away: the SSE subscription and the NDJSON log stream must end (no
 * leaked listener, keep-alive interval or follow stream), whether the client left before the
 * stream started or while it was running.
 */
import { request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
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
  /** `logStreams`: the signal of each follow stream the server started. */
  const state = { subscribers: 0, openLogStreams: 0, logStreams: [] as AbortSignal[] };
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
      const signal = opts.signal;
      if (signal === undefined) throw new Error('the server must pass a signal to a follow stream');
      state.logStreams.push(signal);
      state.openLogStreams++;
      try {
        // a follow stream of an agent that stays quiet: ends only when the request is aborted
        await new Promise<void>((resolve) => {
          if (signal.aborted) resolve();
          signal.addEventListener('abort', () => resolve(), { once: true });
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
    // Whatever the server started for the gone client was told to stop (none at all is fine too).
    expect(svc.state.logStreams.every((signal) => signal.aborted)).toBe(true);
  });

  it('logs -f: starts the follow stream, keeps it while the client reads, and ends it when the client goes away', async () => {
    const svc = slowService();
    svc.release();
    const port = await serve(svc.service);
    const req = request({ host: '127.0.0.1', port, path: '/api/v1/sessions/s-1/logs?follow=true', headers: { authorization: 'Bearer t' } });
    req.on('error', () => undefined);
    const res = await new Promise<IncomingMessage>((resolve) => req.on('response', resolve).end());
    res.on('error', () => undefined);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    await until(() => svc.state.openLogStreams === 1);
    const [signal] = svc.state.logStreams;
    await new Promise((r) => setTimeout(r, 100)); // a few keep-alives later the stream is still open
    expect(svc.state.openLogStreams).toBe(1);
    expect(signal?.aborted).toBe(false);
    req.destroy();
    await until(() => svc.state.openLogStreams === 0);
    expect(signal?.aborted).toBe(true);
    expect(svc.state.logStreams).toHaveLength(1);
  });
});
