/**
 * The dashboard cookie alone grants nothing (issue 18, item 5): a real API server (`startServe`
 * over the fake session service, real PTY shells) is logged into through the code exchange, then
 * every authenticated route of the route table (so a route added later is covered without editing
 * this file) is called with the cookie and the server's own Origin but without the CSRF token, and
 * must be refused; with the token, each answers as the route itself does. The server's log is
 * captured to check that neither the cookie nor the token reaches it.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BerthClient, type WebSocketLike } from '../../../src/api/api-client.js';
import { DashboardAuth } from '../../../src/server/dashboard/auth.js';
import { discoverServer } from '../../../src/server/data-dir.js';
import { ROUTE_TABLE, type HttpMethod } from '../../../src/api/routes.js';
import { startServe, type ServeHandle } from '../../../src/server/serve.js';
import { FakeSessions } from '../../support/fake-sessions.js';
import { tempDir } from '../cli/helpers.js';

type AuthedRoute = Extract<(typeof ROUTE_TABLE)[number], { auth: true }>;
type AuthedOperation = AuthedRoute['operation'];

/** How to call each route with valid input, and its own answer once past the gate. */
interface Case {
  body?: unknown;
  /** Run with the bearer token before the call (on the call's session). */
  prepare?: (id: string) => Promise<unknown>;
  status: number;
}

const AUTHED = ROUTE_TABLE.filter((r): r is AuthedRoute => r.auth);

describe('the dashboard cookie without its CSRF token', () => {
  let dataDir: string;
  let handle: ServeHandle;
  let fake: FakeSessions;
  let base: string;
  let bearer: BerthClient;
  let log = '';
  const secrets: string[] = [];

  /** Every authenticated route's call with the cookie and its token, and what it answers (a new route must be added here: the Record type says so). */
  let cases: Record<AuthedOperation, Case>;

  beforeAll(async () => {
    dataDir = tempDir('berth-cookie-');
    fake = new FakeSessions({ agentLines: 3, agentTickMs: 10 });
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        log += chunk.toString();
        done();
      },
    });
    handle = await startServe({
      dataDir,
      port: 0,
      version: 'test',
      logger: pino({ level: 'debug' }, sink),
      launchOptions: { agents: ['demo'], targets: [{ name: 'local', type: 'local', kind: 'executor', capabilities: { repositoryOptional: false, removes: "the session's workspace directory, with every uncommitted change in it" } }], defaults: { agent: 'demo', executor: 'local' } },
      createService: async () => fake,
    });
    const found = discoverServer(dataDir);
    if (!found) throw new Error('serve.json not written');
    base = found.baseUrl;
    bearer = new BerthClient({ baseUrl: base, token: found.token, webSocket: (url, headers) => new WebSocket(url, { headers }) as unknown as WebSocketLike });
    cases = {
      openapi: { status: 200 },
      launch: { body: { repository: { path: join(dataDir, 'repo') }, agent: 'demo' }, status: 202 },
      list: { status: 200 },
      get: { status: 200 },
      remove: { status: 204 },
      stop: { status: 200 },
      resume: { prepare: (id) => bearer.stop(id), status: 200 },
      events: { status: 200 },
      logs: { status: 200 },
      exec: { body: { argv: ['true'] }, status: 200 },
      input: { body: { data: 'hi\n' }, status: 501 }, // the fake service has no stdin: answered by the route
      cancel: { status: 501 }, // nor ACP agents
      approve: { body: {}, status: 501 },
      agentEvents: { status: 501 },
      egress: { status: 501 }, // nor egress records
      shell: { status: 101 },
      allEvents: { status: 200 },
      launchOptions: { status: 200 },
      pools: { status: 501 }, // the fake service keeps no pool: answered by the route
      removePool: { status: 501 },
      dashboardCodes: { status: 403 }, // codes are for the bearer token only: the route's own refusal
      dashboardSession: { status: 200 },
      dashboardLogout: { status: 204 },
    };
  });

  afterAll(async () => {
    await handle?.close();
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Logs in through the code exchange, as the app does: the cookie (name=value) and the CSRF token. */
  async function login(): Promise<{ cookie: string; csrf: string }> {
    const { code } = await bearer.createDashboardCode();
    const res = await fetch(`${base}/api/v1/dashboard/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ code }),
    });
    expect(res.status).toBe(200);
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const { csrf } = (await res.json()) as { csrf: string };
    secrets.push(cookie.slice(cookie.indexOf('=') + 1), csrf, code);
    return { cookie, csrf };
  }

  /** A session in state ready, for the routes that take an id. */
  async function readySession(): Promise<string> {
    const view = await bearer.launch({ repository: { path: join(dataDir, 'repo') }, agent: 'demo' });
    for await (const e of bearer.events(view.id)) if (e.type === 'state' && e.state === 'ready') break;
    return view.id;
  }

  /** Calls a route (the shell one as a WebSocket upgrade; streams are left once their status is known). */
  async function call(route: { method: HttpMethod; path: string; operation: string }, id: string, headers: Record<string, string>, opts: { body?: unknown; query?: string } = {}): Promise<{ status: number; body: string }> {
    const url = `${base}${route.path.replace('{id}', encodeURIComponent(id))}${opts.query ?? ''}`;
    if (route.operation === 'shell') {
      return new Promise((resolve) => {
        const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers });
        ws.on('unexpected-response', (_req, res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        ws.on('open', () => {
          resolve({ status: 101, body: '' });
          ws.close(1000);
        });
        ws.on('error', () => undefined);
      });
    }
    const res = await fetch(url, {
      method: route.method,
      headers: { ...headers, ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    });
    const streaming = /event-stream|ndjson/.test(res.headers.get('content-type') ?? '') && route.operation !== 'exec';
    if (streaming) {
      await res.body?.cancel();
      return { status: res.status, body: '' };
    }
    return { status: res.status, body: await res.text() };
  }

  it('covers every authenticated route of the route table, GET, streams and the shell included', () => {
    const ops = AUTHED.map((r) => r.operation);
    expect(ops).toEqual(expect.arrayContaining(['list', 'get', 'events', 'logs', 'allEvents', 'shell', 'dashboardSession', 'launch', 'exec', 'remove']));
    expect(Object.keys(cases).sort()).toEqual([...ops].sort());
  });

  it.each(AUTHED.map((r) => [r.method, r.path, r] as const))('refuses %s %s with the cookie and its Origin but no CSRF token', async (_m, _p, route) => {
    const { cookie, csrf } = await login();
    const id = route.path.includes('{id}') ? await readySession() : '';
    const c = cases[route.operation];
    const body = c.body ?? (route.method === 'GET' ? undefined : {});
    const tries: Record<string, string>[] = [{ cookie, origin: base }, { cookie, origin: base, 'x-berth-csrf': 'wrong' }, { cookie }];
    for (const headers of tries) {
      const r = await call(route, id, headers, { body });
      expect(r.status, `${JSON.stringify(Object.keys(headers))}: ${r.body}`).toBe(401);
      expect(r.body).not.toContain(csrf);
    }
    if (id !== '') expect((await bearer.get(id)).state, 'the refused call changed nothing').toBe('ready');
  });

  it('refuses the shell WebSocket with a wrong ?csrf= (the browser form of the token)', async () => {
    const { cookie } = await login();
    const id = await readySession();
    const shell = AUTHED.find((r) => r.operation === 'shell');
    if (!shell) throw new Error('no shell route');
    expect((await call(shell, id, { cookie, origin: base }, { query: '?csrf=wrong' })).status).toBe(401);
  });

  it.each(AUTHED.map((r) => [r.method, r.path, r] as const))('lets %s %s through with the cookie and its CSRF token', async (_m, _p, route) => {
    const { cookie, csrf } = await login();
    const id = route.path.includes('{id}') ? await readySession() : '';
    const c = cases[route.operation];
    await c.prepare?.(id);
    const r = await call(route, id, { cookie, origin: base, 'x-berth-csrf': csrf }, c.body !== undefined ? { body: c.body } : {});
    expect(r.status, r.body).toBe(c.status);
    expect(r.body).not.toContain(csrf);
    if (route.operation === 'dashboardCodes') expect(r.body).toContain('bearer token only');
  });

  it('accepts the shell WebSocket with ?csrf= in the URL, as a browser sends it', async () => {
    const { cookie, csrf } = await login();
    const id = await readySession();
    const shell = AUTHED.find((r) => r.operation === 'shell');
    if (!shell) throw new Error('no shell route');
    expect((await call(shell, id, { cookie, origin: base }, { query: `?csrf=${encodeURIComponent(csrf)}` })).status).toBe(101);
  });

  it('never tells the CSRF token again: the session route answers only whether the login is live', async () => {
    const { cookie, csrf } = await login();
    const alone = await fetch(`${base}/api/v1/dashboard/session`, { headers: { cookie } });
    expect(alone.status).toBe(401);
    const text = await alone.text();
    expect(text).not.toContain(csrf);
    expect(text).toContain('x-berth-csrf');
    const withToken = await fetch(`${base}/api/v1/dashboard/session`, { headers: { cookie, 'x-berth-csrf': csrf } });
    expect(await withToken.json()).toEqual({ loggedIn: true });
  });

  it("names the cookie per serve: this serve's cookie value under another name is refused", async () => {
    const { cookie, csrf } = await login();
    const [name, value] = cookie.split('=') as [string, string];
    expect(name).toMatch(/^berth_session_[0-9a-f]{12}$/);
    expect(name).not.toBe(new DashboardAuth().cookieName);
    const res = await fetch(`${base}/api/v1/sessions`, { headers: { cookie: `berth_session=${value}`, 'x-berth-csrf': csrf } });
    expect(res.status).toBe(401);
  });

  it('never writes a cookie or CSRF token to the server log (the shell ?csrf= included)', () => {
    expect(secrets.length).toBeGreaterThan(20);
    expect(log).toContain('/api/v1/sessions');
    for (const s of secrets) expect(log).not.toContain(s);
  });
});
