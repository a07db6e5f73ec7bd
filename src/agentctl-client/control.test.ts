import { afterEach, describe, expect, it } from 'vitest';
import { closedPortUrl, closeServers, hang, json, reset, serve, type Handler } from '../../test/support/loopback-server.js';
import { ControlClient } from './control.js';
import {
  AgentctlHttpError,
  AgentctlReconcileError,
  AgentctlTimeoutError,
  AgentctlUnreachableError,
  ProtocolError,
  isAgentctlHttpError,
} from './errors.js';
import { buildUrl, normalizeBaseUrl, toWebSocketUrl } from './http.js';

const TOKEN = 'f'.repeat(64);
const NONCE = 'nonce-secret-value';
const FAST = { attempts: 3, initialDelayMs: 1, maxDelayMs: 5 };

afterEach(closeServers);

const fail = (status: number, code: string, message: string): Handler => json(status, { error: { code, message } });

const instance = {
  id: 'task-1',
  port: 41001,
  workspace_path: '/workspace',
  status: 'running',
  created_at: '2026-01-01T00:00:00Z',
  labels: {},
};

describe('URL building', () => {
  it('normalizes a base URL and appends defined query parameters', () => {
    const base = normalizeBaseUrl('http://127.0.0.1:8765/');
    expect(base).toBe('http://127.0.0.1:8765');
    expect(buildUrl(base, '/api/v1/files/tree', { path: 'a b/c', depth: 2, x: undefined })).toBe(
      'http://127.0.0.1:8765/api/v1/files/tree?path=a+b%2Fc&depth=2',
    );
    expect(toWebSocketUrl('https://h:1/x')).toBe('wss://h:1/x');
  });

  it.each(['not a url', 'ftp://h/', 'http://h/?a=1', 'http://u:p@h/'])('rejects base URL %s', (raw) => {
    expect(() => new ControlClient({ baseUrl: raw })).toThrow(TypeError);
  });

  it('encodes ids into paths', async () => {
    const { url, seen } = await serve(json(200, { ...instance, id: 'a.b_c' }));
    await new ControlClient({ baseUrl: url, token: TOKEN }).getInstance('a.b_c');
    expect(seen[0]?.url).toBe('/api/v1/instances/a.b_c');
  });

  it('maps an instance to the control host with its port unless overridden', () => {
    const control = new ControlClient({ baseUrl: 'http://127.0.0.1:8765', token: TOKEN });
    expect(control.instance(instance).baseUrl).toBe('http://127.0.0.1:41001');
    const mapped = new ControlClient({
      baseUrl: 'http://127.0.0.1:8765',
      token: TOKEN,
      instanceBaseUrl: (info) => `http://127.0.0.1:${info.port + 1000}`,
    });
    expect(mapped.instance(instance).baseUrl).toBe('http://127.0.0.1:42001');
    expect(mapped.instance(instance, { baseUrl: 'http://localhost:9' }).baseUrl).toBe('http://localhost:9');
  });
});

describe('ControlClient handshake', () => {
  it('keeps the token and sends it on later calls', async () => {
    const { url, seen } = await serve(json(200, { token: TOKEN }), json(200, { instances: [instance] }));
    const control = new ControlClient({ baseUrl: url });
    expect(await control.handshake(NONCE)).toBe(TOKEN);
    expect(await control.listInstances()).toEqual([instance]);
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ nonce: NONCE });
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(seen[1]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('never puts the nonce into an error, even when the server echoes it', async () => {
    const { url, seen } = await serve(fail(403, 'forbidden', `nonce ${NONCE} was already used`));
    const err = await new ControlClient({ baseUrl: url, retry: FAST }).handshake(NONCE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentctlHttpError);
    expect(err).toMatchObject({ status: 403, code: 'forbidden', mayHaveBeenApplied: false });
    expect(String((err as Error).message)).not.toContain(NONCE);
    expect((err as Error).message).toContain('agentctl POST /auth/handshake');
    expect(seen).toHaveLength(1);
  });

  it('is not retried on a 503', async () => {
    const { url, seen } = await serve(fail(503, 'unavailable', 'starting'));
    await expect(new ControlClient({ baseUrl: url, retry: FAST }).handshake(NONCE)).rejects.toMatchObject({
      status: 503,
      mayHaveBeenApplied: true,
    });
    expect(seen).toHaveLength(1);
  });

  it('rejects a response with the wrong shape as ProtocolError without echoing it', async () => {
    const { url } = await serve(json(200, { token: 'short' }));
    const err = await new ControlClient({ baseUrl: url }).handshake(NONCE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as Error).message).toMatch(/^agentctl POST \/auth\/handshake: unexpected response: token: /);
    expect((err as Error).message).not.toContain('short');
  });

  it('rejects a non-JSON body as ProtocolError without quoting it', async () => {
    const { url } = await serve((_req, res) => res.writeHead(200).end(`token ${TOKEN}`));
    const err = await new ControlClient({ baseUrl: url }).handshake(NONCE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as Error).message).not.toContain(TOKEN);
    expect((err as Error).cause).toBeUndefined();
  });
});

describe('ControlClient errors and retries', () => {
  it.each([
    [400, 'bad_request', false],
    [401, 'unauthorized', false],
    [404, 'not_found', false],
    [409, 'conflict', false],
    [500, 'internal', true],
    [503, 'unavailable', true],
  ] as const)('classifies a %i on a non-idempotent call (mayHaveBeenApplied=%s)', async (status, code, applied) => {
    // createInstance reconciles 5xx; the 404 of its re-read hands back the original error.
    const { url } = await serve(fail(status, code, 'boom'), fail(404, 'not_found', 'no such instance'));
    const err = await new ControlClient({ baseUrl: url, token: TOKEN, retry: FAST })
      .createInstance({ id: 'task-1', workspace_path: '/workspace' })
      .catch((e: unknown) => e);
    expect(isAgentctlHttpError(err)).toBe(true);
    expect(err).toMatchObject({ status, code, mayHaveBeenApplied: applied, name: 'AgentctlHttpError' });
  });

  it('never reports an idempotent call as maybe applied', async () => {
    const { url } = await serve(fail(500, 'internal', 'boom'));
    await expect(new ControlClient({ baseUrl: url, token: TOKEN }).getInstance('x')).rejects.toMatchObject({
      status: 500,
      mayHaveBeenApplied: false,
    });
  });

  it('keeps the token out of error messages even when the server echoes the header', async () => {
    const echo: Handler = (req, res) =>
      fail(401, 'unauthorized', `bad header: authorization: ${String(req.headers.authorization)}`)(req, res);
    const { url } = await serve(echo);
    const err = await new ControlClient({ baseUrl: url, token: TOKEN }).listInstances().catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 401, code: 'unauthorized' });
    expect((err as Error).message).not.toContain(TOKEN);
    expect(JSON.stringify(err)).not.toContain(TOKEN);
  });

  it('keeps a non-envelope error body (a proxy 502) without a code', async () => {
    const { url } = await serve((_req, res) => res.writeHead(502).end('Bad Gateway'));
    const err = await new ControlClient({ baseUrl: url, token: TOKEN, retry: { attempts: 1 } })
      .listInstances()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 502, code: undefined, serverMessage: 'Bad Gateway' });
  });

  it('retries an idempotent call on 502/503/504 until it succeeds', async () => {
    const { url, seen } = await serve(
      fail(503, 'unavailable', 'x'),
      (_q, res) => res.writeHead(502).end(),
      json(200, instance),
    );
    expect(await new ControlClient({ baseUrl: url, token: TOKEN, retry: FAST }).getInstance('task-1')).toEqual(instance);
    expect(seen).toHaveLength(3);
  });

  it('gives up after the configured attempts', async () => {
    const { url, seen } = await serve(fail(503, 'unavailable', 'x'));
    await expect(
      new ControlClient({ baseUrl: url, token: TOKEN, retry: { ...FAST, attempts: 2 } }).health(),
    ).rejects.toBeInstanceOf(AgentctlHttpError);
    expect(seen).toHaveLength(2);
  });

  it('times out with the method, path and timeout in the message', async () => {
    const { url } = await serve(hang);
    const err = await new ControlClient({ baseUrl: url, retry: { attempts: 1 }, timeoutMs: 50 })
      .health()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentctlTimeoutError);
    expect((err as Error).message).toBe('agentctl GET /health: timed out after 50ms');
  });

  it('reports a refused connection as unreachable and not applied, even for a POST', async () => {
    const url = await closedPortUrl();
    const err = await new ControlClient({ baseUrl: url }).handshake(NONCE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentctlUnreachableError);
    expect(err).toMatchObject({ mayHaveBeenApplied: false });
    expect((err as Error).message).toContain('ECONNREFUSED');
    expect((err as Error).cause).toBeDefined();
  });

  it('reports a reset after sending a POST as maybe applied', async () => {
    const { url } = await serve(reset);
    const err = await new ControlClient({ baseUrl: url, token: TOKEN }).handshake(NONCE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentctlUnreachableError);
    expect(err).toMatchObject({ mayHaveBeenApplied: true });
  });

  it('rejects with the caller abort reason and does not retry', async () => {
    const { url, seen } = await serve(hang);
    const controller = new AbortController();
    const pending = new ControlClient({ baseUrl: url, retry: FAST }).health({ signal: controller.signal });
    setTimeout(() => controller.abort(new Error('caller gave up')), 20);
    await expect(pending).rejects.toThrow('caller gave up');
    expect(seen).toHaveLength(1);
  });

  it('counts a 404 on a retried delete as deleted, but not on the first attempt', async () => {
    const retried = await serve(reset, fail(404, 'not_found', 'gone'));
    await expect(
      new ControlClient({ baseUrl: retried.url, token: TOKEN, retry: FAST }).deleteInstance('task-1'),
    ).resolves.toBeUndefined();
    expect(retried.seen.map((s) => s.method)).toEqual(['DELETE', 'DELETE']);

    const first = await serve(fail(404, 'not_found', 'gone'));
    await expect(new ControlClient({ baseUrl: first.url, token: TOKEN }).deleteInstance('task-1')).rejects.toMatchObject({
      status: 404,
    });
  });
});

describe('ControlClient createInstance reconciliation', () => {
  const request = { id: 'task-1', workspace_path: '/workspace' };

  it('accepts the instance found after a timeout when the workspace matches', async () => {
    const { url, seen } = await serve(hang, json(200, instance));
    const control = new ControlClient({ baseUrl: url, token: TOKEN, timeoutMs: 100 });
    expect(await control.createInstance(request)).toEqual(instance);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /api/v1/instances', 'GET /api/v1/instances/task-1']);
  });

  it('accepts the instance found after a reset', async () => {
    const { url } = await serve(reset, json(200, instance));
    expect(await new ControlClient({ baseUrl: url, token: TOKEN }).createInstance(request)).toEqual(instance);
  });

  it('refuses an instance with another workspace', async () => {
    const { url } = await serve(reset, json(200, { ...instance, workspace_path: '/elsewhere' }));
    const err = await new ControlClient({ baseUrl: url, token: TOKEN }).createInstance(request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentctlReconcileError);
    expect(err).toMatchObject({ reason: 'workspace_mismatch', instanceId: 'task-1' });
    expect((err as Error).cause).toBeInstanceOf(AgentctlUnreachableError);
  });

  it('rethrows the create error when the instance does not exist', async () => {
    const { url } = await serve(reset, fail(404, 'not_found', 'no such instance'));
    const err = await new ControlClient({ baseUrl: url, token: TOKEN }).createInstance(request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentctlUnreachableError);
  });

  it('does not reconcile a conflict', async () => {
    const { url, seen } = await serve(fail(409, 'conflict', 'other workspace'));
    await expect(new ControlClient({ baseUrl: url, token: TOKEN }).createInstance(request)).rejects.toMatchObject({
      status: 409,
      mayHaveBeenApplied: false,
    });
    expect(seen).toHaveLength(1);
  });

  it('refuses a created instance with another id', async () => {
    const { url } = await serve(json(201, { ...instance, id: 'other' }));
    await expect(new ControlClient({ baseUrl: url, token: TOKEN }).createInstance(request)).rejects.toBeInstanceOf(
      ProtocolError,
    );
  });
});
