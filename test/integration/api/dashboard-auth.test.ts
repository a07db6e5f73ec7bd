/**
 * The dashboard's auth against a real API server (`startServe`, the real controller with the
 * local executor and the demo agent) on loopback with a temp data dir: one-time login codes, the
 * cookie with CSRF and Origin checks (the route-by-route sweep is in dashboard-cookie-alone.test.ts), the Host check, the shell upgrade, `/api/v1/events` and the
 * static app's headers. The server's log is captured to check that no secret ends up in it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BerthClient, type WebSocketLike } from '../../../src/api/api-client.js';
import { launchOptionsOf } from '../../../src/server/dashboard/launch-options.js';
import { discoverServer } from '../../../src/server/data-dir.js';
import { startServe, type ServeHandle } from '../../../src/server/serve.js';
import { createController } from '../../../src/controller/index.js';
import type { SessionEvent } from '../../../src/controller/service.js';
import { FakeSessions } from '../../support/fake-sessions.js';
import { ensureBuilt, runCli } from '../cli/helpers.js';
import { agentctlBundle, cleanup, FAST_AGENT_ENV, killLeftovers, makeRepo, tempDir, testConfig } from '../sessions/helpers.js';

describe('dashboard auth on a real API server', () => {
  let root: string;
  let dataDir: string;
  let repo: string;
  let handle: ServeHandle;
  let base: string;
  let token: string;
  let bearer: BerthClient;
  let log = '';
  const secrets: string[] = [];

  beforeAll(async () => {
    root = tempDir('dashboard');
    dataDir = join(root, 'data');
    const webRoot = join(root, 'web');
    mkdirSync(join(webRoot, 'assets'), { recursive: true });
    writeFileSync(join(webRoot, 'index.html'), '<!doctype html><title>Berth</title><script type="module" src="/assets/app-1.js"></script>\n');
    writeFileSync(join(webRoot, 'assets', 'app-1.js'), 'console.log("berth")\n');
    repo = makeRepo(root, 'repo', 'dashboard');
    const agentctlPath = agentctlBundle(root);
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        log += chunk.toString();
        done();
      },
    });
    const logger = pino({ level: 'debug' }, sink);
    const config = testConfig();
    handle = await startServe({
      dataDir,
      port: 0,
      version: 'test',
      logger,
      webRoot,
      launchOptions: launchOptionsOf(config),
      createService: async () => {
        const c = await createController({ dataDir, agentctlPath, config, env: {}, logger });
        await c.recover();
        return c;
      },
    });
    const found = discoverServer(dataDir);
    if (!found) throw new Error('serve.json not written');
    base = found.baseUrl;
    token = found.token;
    bearer = new BerthClient({ baseUrl: base, token, webSocket: (url, headers) => new WebSocket(url, { headers }) as unknown as WebSocketLike });
  });

  afterAll(async () => {
    for (const s of (await bearer?.list().catch(() => [])) ?? []) await bearer.remove(s.id, { force: true }).catch(() => undefined);
    await handle?.close();
    killLeftovers(dataDir);
    cleanup(root);
  });

  /** Logs in with a fresh code like the app does; returns the cookie header and the CSRF token. */
  async function login(): Promise<{ cookie: string; csrf: string }> {
    const { code } = await bearer.createDashboardCode();
    secrets.push(code);
    const res = await fetch(`${base}/api/v1/dashboard/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ code }),
    });
    expect(res.status).toBe(200);
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^berth_session_[0-9a-f]{12}=[A-Za-z0-9_-]+; HttpOnly; SameSite=Strict; Path=\/$/);
    const cookie = setCookie.split(';')[0] ?? '';
    const { csrf } = (await res.json()) as { csrf: string };
    secrets.push(cookie.slice(cookie.indexOf('=') + 1), csrf);
    return { cookie, csrf };
  }

  it('accepts a login code once; a replayed code is refused with what to do', async () => {
    const { code, expiresAt } = await bearer.createDashboardCode();
    secrets.push(code);
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(4 * 60_000);
    const post = (): Promise<Response> =>
      fetch(`${base}/api/v1/dashboard/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: base }, body: JSON.stringify({ code }) });
    expect((await post()).status).toBe(200);
    const replay = await post();
    expect(replay.status).toBe(401);
    expect(await replay.json()).toEqual({
      error: { code: 'unauthorized', message: 'this login code was already used or has expired; run `berth dashboard` for a new one' },
    });
  });

  it('berth dashboard prints the login URL (code in the fragment) and that it is valid once, for 5 minutes', async () => {
    ensureBuilt();
    const r = await runCli(['dashboard'], { dataDir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('valid for 5 minutes, once');
    const m = /^http:\/\/127\.0\.0\.1:(\d+)\/#code=([A-Za-z0-9_-]{43})$/m.exec(r.stdout);
    expect(m?.[1], r.stdout).toBe(new URL(base).port);
    const code = m?.[2] ?? '';
    secrets.push(code);
    const res = await fetch(`${base}/api/v1/dashboard/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: base }, body: JSON.stringify({ code }) });
    expect(res.status).toBe(200);
  });

  it('issues login codes to the bearer token only', async () => {
    const { cookie, csrf } = await login();
    const res = await fetch(`${base}/api/v1/dashboard/codes`, { method: 'POST', headers: { cookie, origin: base, 'x-berth-csrf': csrf } });
    expect(res.status).toBe(403);
    expect((await fetch(`${base}/api/v1/dashboard/codes`, { method: 'POST' })).status).toBe(401);
  });

  it('lets the cookie GET only with its CSRF token, and never tells the token again', async () => {
    const { cookie, csrf } = await login();
    const list = await fetch(`${base}/api/v1/sessions`, { headers: { cookie, 'x-berth-csrf': csrf } });
    expect(list.status).toBe(200);
    expect(await list.json()).toHaveProperty('sessions');
    expect((await fetch(`${base}/api/v1/sessions`, { headers: { cookie } })).status).toBe(401);
    const session = await fetch(`${base}/api/v1/dashboard/session`, { headers: { cookie, 'x-berth-csrf': csrf } });
    expect(await session.json()).toEqual({ loggedIn: true });
    const alone = await fetch(`${base}/api/v1/dashboard/session`, { headers: { cookie } });
    expect(alone.status).toBe(401);
    expect(await alone.text()).not.toContain(csrf);
    expect((await fetch(`${base}/api/v1/dashboard/session`)).status).toBe(401);
    const name = cookie.slice(0, cookie.indexOf('='));
    expect((await fetch(`${base}/api/v1/sessions`, { headers: { cookie: `${name}=forged`, 'x-berth-csrf': csrf } })).status).toBe(401);
  });

  it('refuses a cookie POST without the CSRF token or the Origin, and accepts it with both', async () => {
    const { cookie, csrf } = await login();
    const stop = (headers: Record<string, string>): Promise<Response> => fetch(`${base}/api/v1/sessions/nope/stop`, { method: 'POST', headers: { cookie, ...headers } });
    const noCsrf = await stop({ origin: base });
    expect(noCsrf.status).toBe(401);
    expect(await noCsrf.json()).toMatchObject({ error: { code: 'unauthorized', message: expect.stringContaining('x-berth-csrf') } });
    expect((await stop({ origin: base, 'x-berth-csrf': 'wrong' })).status).toBe(401);
    expect((await stop({ 'x-berth-csrf': csrf })).status).toBe(403);
    // Past the checks: the route itself answers (no such session).
    expect((await stop({ origin: base, 'x-berth-csrf': csrf })).status).toBe(404);
  });

  it('refuses a cookie request from a foreign Origin, GET included', async () => {
    const { cookie, csrf } = await login();
    const get = await fetch(`${base}/api/v1/sessions`, { headers: { cookie, origin: 'http://evil.example', 'x-berth-csrf': csrf } });
    expect(get.status).toBe(403);
    expect(await get.json()).toMatchObject({ error: { code: 'forbidden', message: expect.stringContaining('http://evil.example') } });
    const post = await fetch(`${base}/api/v1/sessions/nope/stop`, { method: 'POST', headers: { cookie, origin: 'http://evil.example', 'x-berth-csrf': csrf } });
    expect(post.status).toBe(403);
    const loginFromElsewhere = await fetch(`${base}/api/v1/dashboard/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'http://evil.example' }, body: '{"code":"x"}' });
    expect(loginFromElsewhere.status).toBe(403);
  });

  it('logs out: the cookie stops working and is cleared', async () => {
    const { cookie, csrf } = await login();
    const out = await fetch(`${base}/api/v1/dashboard/logout`, { method: 'POST', headers: { cookie, origin: base, 'x-berth-csrf': csrf } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^berth_session_[0-9a-f]{12}=;.*Max-Age=0/);
    expect((await fetch(`${base}/api/v1/sessions`, { headers: { cookie, 'x-berth-csrf': csrf } })).status).toBe(401);
  });

  it('refuses a foreign Host header on API, static and health requests', async () => {
    const port = new URL(base).port;
    const status = (path: string, host: string): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path, headers: { host, authorization: `Bearer ${token}` } }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    for (const path of ['/api/v1/sessions', '/', '/health']) {
      const r = await status(path, `rebind.example:${port}`);
      expect(r.status, path).toBe(403);
      expect(r.body).toContain(`rebind.example:${port}`);
    }
    expect((await status('/api/v1/sessions', `localhost:${port}`)).status).toBe(200);
  });

  it('refuses a shell WebSocket upgrade with the cookie from a foreign Origin (and a foreign Host)', async () => {
    const { cookie, csrf } = await login();
    const url = `${base.replace('http', 'ws')}/api/v1/sessions/nope/shell?csrf=${encodeURIComponent(csrf)}`;
    const upgrade = (headers: Record<string, string>, at = url): Promise<number> =>
      new Promise((resolve) => {
        const ws = new WebSocket(at, { headers });
        ws.on('unexpected-response', (_req, res) => {
          resolve(res.statusCode ?? 0);
          ws.terminate();
        });
        ws.on('open', () => {
          resolve(101);
          ws.terminate();
        });
        ws.on('error', () => undefined);
      });
    expect(await upgrade({ cookie, origin: 'http://evil.example' })).toBe(403);
    expect(await upgrade({ cookie })).toBe(403);
    expect(await upgrade({ authorization: `Bearer ${token}`, host: 'rebind.example' })).toBe(403);
    // Without its CSRF token the cookie gets nothing, even from its own Origin.
    expect(await upgrade({ cookie, origin: base }, url.replace(/\?.*/, ''))).toBe(401);
    // With its own Origin and the token the cookie gets the socket (the shell then reports the unknown session).
    expect(await upgrade({ cookie, origin: base })).toBe(101);
  });

  it('keeps bearer clients working without an Origin', async () => {
    expect(Array.isArray(await bearer.list())).toBe(true);
    const options = await bearer.launchOptions();
    expect(options.defaults).toEqual({ agent: 'demo', executor: 'local' });
    expect(options.targets).toContainEqual({ name: 'local', type: 'local', kind: 'executor', capabilities: { repositoryOptional: false, removes: "the session's workspace directory, with every uncommitted change in it" } });
  });

  it('works with the typed client in cookie mode (no token; the CSRF token from the login)', async () => {
    const { cookie, csrf } = await login();
    const cookieFetch: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), cookie, origin: base } });
    const browser = new BerthClient({ baseUrl: base, token: null, csrf, fetch: cookieFetch });
    expect(await browser.dashboardSession()).toEqual({ loggedIn: true });
    expect(await browser.list()).toEqual(await bearer.list());
    await expect(browser.stop('nope')).rejects.toMatchObject({ status: 404 });
  });

  it('streams a new session and its removal on /api/v1/events', async () => {
    // A settled session first: its state in the stream's snapshot shows the stream is subscribed.
    const pre = await bearer.launch({ repository: { path: repo }, agent: 'demo', env: FAST_AGENT_ENV, name: 'dash-pre' });
    for await (const e of bearer.events(pre.id)) if (e.type === 'state' && e.state !== 'launching') break;

    const { cookie, csrf } = await login();
    const abort = new AbortController();
    const cookieFetch: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), cookie } });
    const browser = new BerthClient({ baseUrl: base, token: null, csrf, fetch: cookieFetch });
    const seen: SessionEvent[] = [];
    let wake: () => void = () => undefined;
    const reading = (async () => {
      for await (const e of browser.allEvents({ signal: abort.signal })) {
        seen.push(e);
        wake();
      }
    })();
    const until = async (pred: (e: SessionEvent) => boolean): Promise<SessionEvent> => {
      for (;;) {
        const found = seen.find(pred);
        if (found) return found;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    };
    try {
      await until((e) => e.sessionId === pre.id && e.type === 'state');
      const view = await bearer.launch({ repository: { path: repo }, agent: 'demo', env: FAST_AGENT_ENV, name: 'dash-events' });
      await until((e) => e.sessionId === view.id && e.type === 'state' && e.state !== 'launching');
      await bearer.remove(view.id);
      await until((e) => e.sessionId === view.id && e.type === 'removed');
      const mine = seen.filter((e) => e.sessionId === view.id);
      expect(mine[0]).toMatchObject({ type: 'state', state: 'launching' });
      expect(mine.some((e) => e.type === 'stage')).toBe(true);
      expect(mine.some((e) => e.type === 'state' && e.state === 'ready')).toBe(true);
      expect(mine.at(-1)?.type).toBe('removed');
    } finally {
      abort.abort();
      await reading.catch(() => undefined);
    }
  });

  it('serves the app with the CSP and no-store, assets by name, and nothing outside the web root', async () => {
    for (const path of ['/', '/sessions/abc', '/launch']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(200);
      expect(await res.text()).toContain('<title>Berth</title>');
      expect(res.headers.get('content-security-policy')).toBe(
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
      );
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    const asset = await fetch(`${base}/assets/app-1.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(asset.headers.get('content-security-policy')).not.toBeNull();
    expect((await fetch(`${base}/assets/missing.js`)).status).toBe(404);
    // Raw paths (fetch would normalize them): nothing outside the web root is read.
    const raw = (path: string): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: new URL(base).port, path }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    for (const path of ['/../data/serve.json', '/assets/../../data/serve.json', '/..%2fdata%2fserve.json', '/assets/..%2f..%2fdata%2fserve.json', '/%2e%2e/data/serve.json']) {
      const r = await raw(path);
      expect(r.body, path).not.toContain('"port"');
      expect([200, 404], path).toContain(r.status);
    }
    expect((await raw('/assets/..%2f..%2fdata%2fserve.json')).status).toBe(404);
  });

  it('answers 503 naming `npm run build` when the app is not built', async () => {
    const other = await startServe({ dataDir: join(root, 'data-unbuilt'), port: 0, version: 'test', webRoot: join(root, 'no-web'), createService: async () => new FakeSessions() });
    try {
      const res = await fetch(`http://127.0.0.1:${other.port}/`);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain('npm run build');
    } finally {
      await other.close();
    }
  });

  it('never writes a login code, cookie or CSRF token to the server log', () => {
    expect(secrets.length).toBeGreaterThan(5);
    expect(log).toContain('/api/v1/dashboard/login');
    for (const s of secrets) expect(log).not.toContain(s);
    expect(log).not.toContain(token);
  });
});
