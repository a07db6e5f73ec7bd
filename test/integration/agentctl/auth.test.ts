import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, collectStream, createInstance, requestJson, startWithInstance, tempDir, type AgentctlProcess, type InstanceApi } from '../support/agentctl.js';

const workspace = tempDir();
let agentctl: AgentctlProcess;
let token: string;
let api: InstanceApi;

beforeAll(async () => {
  ({ agentctl, token, api } = await startWithInstance('auth-1', workspace));
  await createInstance(agentctl, token, 'auth-2', tempDir());
  const started = await api.request('POST', '/api/v1/processes', { body: { command: ['true'], id: 'p1' } });
  expect(started.status).toBe(201);
});
afterAll(() => cleanup(workspace));

const controlRoutes: Array<[string, string]> = [
  ['GET', '/api/v1/instances'],
  ['POST', '/api/v1/instances'],
  ['GET', '/api/v1/instances/auth-1'],
  ['DELETE', '/api/v1/instances/auth-1'],
  ['GET', '/api/v1/no-such-route'],
];

const instanceRoutes: Array<[string, string]> = [
  ['GET', '/health'],
  ['GET', '/api/v1/processes'],
  ['POST', '/api/v1/processes'],
  ['GET', '/api/v1/processes/p1'],
  ['POST', '/api/v1/processes/p1/stdin'],
  ['POST', '/api/v1/processes/p1/signal'],
  ['GET', '/api/v1/processes/p1/output'],
  ['GET', '/api/v1/files/tree'],
  ['GET', '/api/v1/files/content?path=x'],
  ['PUT', '/api/v1/files/content'],
  ['DELETE', '/api/v1/files/content?path=x'],
  ['GET', '/api/v1/git/status'],
  ['GET', '/api/v1/git/diff'],
  ['GET', '/api/v1/git/log'],
  ['POST', '/api/v1/git/commit'],
  ['GET', '/api/v1/nope'],
];

const badTokens: Array<[string, Record<string, string>]> = [
  ['no Authorization header', {}],
  ['a wrong token', { authorization: 'Bearer 0000000000000000000000000000000000000000000000000000000000000000' }],
  ['a non-Bearer scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
  ['an empty bearer', { authorization: 'Bearer ' }],
];

describe('agentctl auth - control routes', () => {
  it.each(controlRoutes)('%s %s needs the bearer token', async (method, path) => {
    for (const [, headers] of badTokens) {
      const res = await requestJson(`${agentctl.url}${path}`, method, { headers, rawBody: method === 'GET' || method === 'DELETE' ? undefined : '{}' });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body).toMatchObject({ error: { code: 'unauthorized' } });
    }
  });
});

describe('agentctl auth - instance routes', () => {
  it.each(instanceRoutes)('%s %s needs the token (401) and the right X-Instance-ID (403)', async (method, path) => {
    const url = `${api.url}${path}`;
    const rawBody = method === 'GET' || method === 'DELETE' ? undefined : '{}';
    for (const [what, headers] of badTokens) {
      const res = await requestJson(url, method, { headers: { ...headers, 'x-instance-id': api.id }, rawBody });
      expect(res.status, what).toBe(401);
    }
    const wrongId = await requestJson(url, method, { token, headers: { 'x-instance-id': 'auth-2' }, rawBody });
    expect(wrongId.status).toBe(403);
    expect(wrongId.body).toMatchObject({ error: { code: 'forbidden' } });
    const noId = await requestJson(url, method, { token, rawBody });
    expect(noId.status).toBe(403);
  });

  it('accepts a request with the token and the instance id', async () => {
    expect((await api.request('GET', '/health')).status).toBe(200);
  });
});

describe('agentctl auth - WebSocket upgrades', () => {
  const streamUrl = (): string => `ws://127.0.0.1:${api.port}/api/v1/processes/p1/stream`;
  const cases: Array<[string, () => Record<string, string>, number]> = [
    ['no token', () => ({ 'x-instance-id': api.id }), 401],
    ['a wrong token', () => ({ authorization: `Bearer ${'1'.repeat(64)}`, 'x-instance-id': api.id }), 401],
    ['a wrong instance id', () => ({ authorization: `Bearer ${token}`, 'x-instance-id': 'auth-2' }), 403],
    ['no instance id', () => ({ authorization: `Bearer ${token}` }), 403],
  ];

  it.each(cases)('refuses the upgrade with %s before it happens', async (_what, headers, status) => {
    const result = await collectStream(streamUrl(), headers());
    expect(result.rejectedStatus).toBe(status);
    expect(result.messages).toEqual([]);
  });

  it('refuses upgrades on the control port', async () => {
    const result = await collectStream(`ws://127.0.0.1:${agentctl.controlPort}/api/v1/instances`, { authorization: `Bearer ${token}` });
    expect(result.rejectedStatus).toBe(404);
  });

  it('upgrades with the token and the instance id', async () => {
    const result = await collectStream(streamUrl(), { authorization: `Bearer ${token}`, 'x-instance-id': api.id });
    expect(result.rejectedStatus).toBeNull();
    expect(result.messages.at(-1)).toMatchObject({ type: 'exit', exit_code: 0 });
  });
});
