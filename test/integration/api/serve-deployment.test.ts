/**
 * `berth serve` as a Kubernetes Deployment runs it (in process, over FakeSessions): the token from
 * `--token-file` (the same across restarts and replicas, still written to `state/api-token`), the
 * Service and Ingress names of `--public-host` in the Host check, and the dashboard behind a
 * TLS-terminating Ingress (`--secure-cookie`: a Secure cookie, the https:// Origin accepted).
 */
import { readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeHandle } from '../../../src/server/serve.js';
import { FakeSessions } from '../../support/fake-sessions.js';
import { tempDir } from '../cli/helpers.js';

const TOKEN = 'mounted-secret-token-0123456789-abcdefghij';

interface Reply {
  status: number;
  body: string;
  setCookie: string | undefined;
}

/** A request with an explicit Host header (fetch does not let a test set it). */
function call(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, setCookie: res.headers['set-cookie']?.[0] }));
    });
    req.once('error', reject);
    req.end(body);
  });
}

describe('berth serve behind a Service and an Ingress', () => {
  let dataDir: string;
  let handle: ServeHandle;

  beforeAll(async () => {
    dataDir = join(tempDir('serve-deploy'), 'data');
    handle = await startServe({
      dataDir,
      port: 0,
      version: 'test',
      token: TOKEN,
      publicHosts: ['berth.agents.svc', 'berth.example.com'],
      secureCookie: true,
      createService: async () => new FakeSessions(),
    });
  });

  afterAll(async () => {
    await handle?.close();
    rmSync(dirname(dataDir), { recursive: true, force: true });
  });

  const bearer = { authorization: `Bearer ${TOKEN}` };

  it('serves with the given token and writes it to state/api-token', async () => {
    expect(readFileSync(join(dataDir, 'state', 'api-token'), 'utf8').trim()).toBe(TOKEN);
    expect((await call(handle.port, 'GET', '/api/v1/sessions', { ...bearer, host: `127.0.0.1:${handle.port}` })).status).toBe(200);
    expect((await call(handle.port, 'GET', '/api/v1/sessions', { authorization: 'Bearer wrong', host: `127.0.0.1:${handle.port}` })).status).toBe(401);
  });

  it('accepts the Service and Ingress names in Host, with or without a port, and refuses others', async () => {
    for (const host of ['berth.agents.svc', 'berth.agents.svc:80', 'berth.example.com', 'berth.example.com:443']) {
      expect((await call(handle.port, 'GET', '/api/v1/sessions', { ...bearer, host })).status, host).toBe(200);
    }
    const refused = await call(handle.port, 'GET', '/api/v1/sessions', { ...bearer, host: 'rebind.example' });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('rebind.example');
  });

  it('logs the dashboard in through a TLS-terminating Ingress: Secure cookie, https Origin', async () => {
    const host = 'berth.example.com';
    const origin = `https://${host}`;
    const codes = await call(handle.port, 'POST', '/api/v1/dashboard/codes', { ...bearer, host });
    expect(codes.status).toBe(200);
    const { code } = JSON.parse(codes.body) as { code: string };
    const login = await call(handle.port, 'POST', '/api/v1/dashboard/login', { host, origin, 'content-type': 'application/json' }, JSON.stringify({ code }));
    expect(login.status).toBe(200);
    expect(login.setCookie).toMatch(/; HttpOnly; SameSite=Strict; Path=\/; Secure$/);
    const cookie = login.setCookie?.split(';')[0] ?? '';
    const { csrf } = JSON.parse(login.body) as { csrf: string };
    const withCookie = { host, cookie, 'x-berth-csrf': csrf };
    expect((await call(handle.port, 'GET', '/api/v1/sessions', { ...withCookie, origin })).status).toBe(200);
    const foreign = await call(handle.port, 'GET', '/api/v1/sessions', { ...withCookie, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
  });
});
