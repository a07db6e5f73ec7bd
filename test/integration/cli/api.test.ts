import { readFileSync, statSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BerthClient, type WebSocketLike } from '../../../src/api/api-client.js';
import { BerthApiError } from '../../../src/api/errors.js';
import { ServeLockedError, discoverServer, LOCK_FILE } from '../../../src/server/data-dir.js';
import { startServe, type ServeHandle } from '../../../src/server/serve.js';
import { createApiServer } from '../../../src/server/server.js';
import type { AddressInfo } from 'node:net';
import type { SessionEvent } from '../../../src/controller/service.js';
import type { FakeSessions } from '../../support/fake-sessions.js';
import { startFakeServe, tempDir } from './helpers.js';

describe('Berth HTTP API over the fake session service', () => {
  let dataDir: string;
  let handle: ServeHandle;
  let fake: FakeSessions;
  let client: BerthClient;
  let base: string;
  let token: string;

  beforeAll(async () => {
    dataDir = tempDir('berth-api-');
    ({ handle, fake } = await startFakeServe(dataDir, { agentLines: 5, agentTickMs: 10 }));
    const found = discoverServer(dataDir);
    if (!found) throw new Error('serve.json not written');
    base = found.baseUrl;
    token = found.token;
    client = new BerthClient({
      baseUrl: base,
      token,
      webSocket: (url, headers) => new WebSocket(url, { headers }) as unknown as WebSocketLike,
    });
  });

  afterAll(async () => {
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes the token with mode 0600 and the actual port to serve.json', () => {
    expect(statSync(join(dataDir, 'state', 'api-token')).mode & 0o777).toBe(0o600);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    const info = JSON.parse(readFileSync(join(dataDir, 'serve.json'), 'utf8')) as { pid: number; port: number };
    expect(info).toMatchObject({ pid: process.pid, port: handle.port });
  });

  it('answers /health without a token', async () => {
    const res = await fetch(`${base}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', version: 'test' });
  });

  it.each([
    ['no token', undefined],
    ['a wrong token', 'Bearer nope'],
    ['a token differing in case', () => `Bearer ${token.toUpperCase()}`],
  ])('refuses %s with 401 and the error envelope', async (_name, header) => {
    const value = typeof header === 'function' ? header() : header;
    const res = await fetch(`${base}/api/v1/sessions`, value ? { headers: { authorization: value } } : {});
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: 'unauthorized' } });
  });

  it('refuses a shell WebSocket upgrade without a token', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/api/v1/sessions/x/shell`);
    const status = await new Promise<number | undefined>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    ws.terminate();
    expect(status).toBe(401);
  });

  it('maps an unknown session to 404 not_found', async () => {
    const err = await client.get('nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BerthApiError);
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
    expect((err as Error).message).toContain("session not found: 'nope'");
  });

  it('rejects an invalid launch body with 400 naming the field', async () => {
    const res = await fetch(`${base}/api/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ repository: { path: '/x' }, env: { 'BAD-NAME': 'v' } }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'bad_request', field: 'env.BAD-NAME' } });
  });

  it('maps a LaunchValidationError of the service to 400 with its field', async () => {
    const err = await client.launch({ repository: { path: '/x' }, agent: 'nosuch' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, code: 'bad_request', field: 'agent' });
  });

  it('answers malformed JSON with 400 and unknown routes with 404 / 405', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const bad = await fetch(`${base}/api/v1/sessions`, { method: 'POST', headers: auth, body: '{' });
    expect(bad.status).toBe(400);
    expect((await fetch(`${base}/api/v1/nothing`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${base}/api/v1/sessions`, { method: 'DELETE', headers: auth })).status).toBe(405);
  });

  it('launches, streams the stages as SSE (current ones first), logs and exec', async () => {
    const view = await client.launch({ repository: { path: '/repo' }, name: 'first' });
    expect(view.state).toBe('launching');
    const events: SessionEvent[] = [];
    const abort = new AbortController();
    for await (const e of client.events(view.id, { signal: abort.signal })) {
      events.push(e);
      if (e.type === 'state' && e.state === 'ready') abort.abort();
    }
    expect(events.find((e) => e.type === 'state')).toMatchObject({ type: 'state', sessionId: view.id });
    const done = events.filter((e) => e.type === 'stage' && e.stage.status === 'succeeded').map((e) => (e.type === 'stage' ? e.stage.name : ''));
    expect(new Set(done)).toEqual(new Set(['workspace', 'agentctl_start', 'agentctl_connect', 'agent_start']));

    let text = '';
    for await (const chunk of client.logs(view.id, { follow: true })) text += Buffer.from(chunk.data).toString();
    expect(text).toContain('demo agent: step 5');

    let out = '';
    const r = await client.exec(view.id, { argv: ['sh', '-c', 'cat; echo err >&2; exit 7'], stdin: Buffer.from('piped') }, {
      onOutput: (c) => (out += Buffer.from(c.data).toString()),
    });
    expect(r).toEqual({ exitCode: 7, signal: null });
    expect(out).toContain('piped');
    expect(out).toContain('err');
  });

  it('maps a SessionStateError to 409 (exec on a stopped session, resume of a ready one)', async () => {
    const view = await client.launch({ repository: { url: 'file:///repo.git' } });
    await fake.stop(view.id);
    await expect(client.exec(view.id, { argv: ['true'] })).rejects.toMatchObject({ status: 409, code: 'conflict' });
    await expect(client.stop(view.id)).resolves.toMatchObject({ state: 'stopped' });
    await client.remove(view.id, { force: true });
    await expect(client.get(view.id)).rejects.toMatchObject({ status: 404 });
  });

  it('runs an interactive shell over the WebSocket with a real PTY', async () => {
    const view = await client.launch({ repository: { path: '/repo' } });
    const abort = new AbortController();
    for await (const e of client.events(view.id, { signal: abort.signal })) if (e.type === 'state' && e.state === 'ready') abort.abort();
    let out = '';
    let waiter: { text: string; resolve: () => void } | undefined;
    const seen = (text: string): Promise<void> =>
      out.includes(text) ? Promise.resolve() : new Promise((resolve) => (waiter = { text, resolve }));
    const conn = client.shell(view.id, {
      rows: 30,
      cols: 100,
      onOutput: (c) => {
        out += Buffer.from(c.data).toString();
        if (waiter && out.includes(waiter.text)) waiter.resolve();
      },
    });
    conn.write(Buffer.from('echo "size=$(stty size)"; tty\n'));
    await seen('size=30 100');
    conn.resize(40, 120);
    conn.write(Buffer.from('echo "size=$(stty size)"; exit 3\n'));
    const result = await conn.done;
    expect(result.exitCode).toBe(3);
    expect(out, 'a resize reaches the PTY before later input').toContain('size=40 120');
    expect(out).toMatch(/\/dev\/pts\/\d+/);
  });

  it('ends the workspace shell when the client closes the shell WebSocket', async () => {
    const view = await client.launch({ repository: { path: '/repo' } });
    const abort = new AbortController();
    for await (const e of client.events(view.id, { signal: abort.signal })) if (e.type === 'state' && e.state === 'ready') abort.abort();
    let out = '';
    let found: (pid: number) => void = () => undefined;
    const pid = new Promise<number>((resolve) => (found = resolve));
    const conn = client.shell(view.id, {
      rows: 24,
      cols: 80,
      onOutput: (c) => {
        out += Buffer.from(c.data).toString();
        const m = /shell-pid=(\d+)/.exec(out);
        if (m) found(Number(m[1]));
      },
    });
    conn.done.catch(() => undefined);
    conn.write(Buffer.from('echo "shell-pid=$$"\n'));
    const shellPid = await pid;
    conn.close();
    const alive = (): boolean => {
      try {
        process.kill(shellPid, 0);
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${shellPid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    while (alive()) await new Promise((r) => setTimeout(r, 25));
    expect(alive()).toBe(false);
  });

  it('keeps quiet exec and log streams alive with ping lines the client ignores', async () => {
    const server = createApiServer({ service: fake, token: 't', version: 'test', keepAliveMs: 20 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const view = await client.launch({ repository: { path: '/repo' } });
      const abort = new AbortController();
      for await (const e of client.events(view.id, { signal: abort.signal })) if (e.type === 'state' && e.state === 'ready') abort.abort();
      const res = await fetch(`${url}/api/v1/sessions/${view.id}/exec`, {
        method: 'POST',
        headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
        body: JSON.stringify({ argv: ['sh', '-c', 'sleep 0.3; exit 2'] }),
      });
      const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { type: string });
      expect(lines.some((l) => l.type === 'ping')).toBe(true);
      expect(lines.at(-1)).toEqual({ type: 'exit', exitCode: 2, signal: null });
      const quiet = new BerthClient({ baseUrl: url, token: 't' });
      await expect(quiet.exec(view.id, { argv: ['sh', '-c', 'sleep 0.2; exit 5'] })).resolves.toEqual({ exitCode: 5, signal: null });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('serves an OpenAPI document listing every route', async () => {
    const doc = (await client.openapi()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/api/v1/sessions/{id}/exec');
  });

  it('refuses a second serve on the same data dir, and takes over a stale lock', async () => {
    const second = startServe({ dataDir, port: 0, version: 'test', createService: () => Promise.reject(new Error('must not be called')) });
    await expect(second).rejects.toBeInstanceOf(ServeLockedError);

    const other = tempDir('berth-api-stale-');
    writeFileSync(join(other, LOCK_FILE), '999999999');
    const h = await startServe({ dataDir: other, port: 0, version: 'test', createService: async () => fake });
    expect(readFileSync(join(other, LOCK_FILE), 'utf8').split(' ')[0]).toBe(String(process.pid));
    await h.close();
    rmSync(other, { recursive: true, force: true });
  });
});
