/**
 * The instance API through the control port: a request or WebSocket upgrade that names an
 * instance in X-Instance-ID is served by that instance (so a controller behind one port-forward
 * needs no second one), with the instance's own authentication; the control API is unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENTCTL_FEATURES } from '../../../src/protocol/index.js';
import { cleanup, collectStream, createInstance, requestJson, startWithInstance, tempDir, until, type AgentctlProcess, type InstanceApi } from '../support/agentctl.js';

const workspace = tempDir();
const other = tempDir();
let agentctl: AgentctlProcess;
let token: string;
let api: InstanceApi;

beforeAll(async () => {
  ({ agentctl, token, api } = await startWithInstance('route-1', workspace));
  await createInstance(agentctl, token, 'route-2', other);
});
afterAll(() => cleanup(workspace, other));

/** A request to the control port naming `instance`. */
function viaControl<T = unknown>(method: string, path: string, instance: string, opts: { token?: string; body?: unknown } = {}) {
  return requestJson<T>(`${agentctl.url}${path}`, method, { ...opts, headers: { 'x-instance-id': instance } });
}

describe('agentctl control port: instance routing', () => {
  it('announces the feature in its health', async () => {
    const res = await requestJson<{ features?: string[] }>(`${agentctl.url}/health`, 'GET');
    expect(res.status).toBe(200);
    expect(res.body.features).toContain(AGENTCTL_FEATURES.instanceApiOnControl);
  });

  it('serves the named instance: a process started through the control port runs in that instance only', async () => {
    const started = await viaControl('POST', '/api/v1/processes', 'route-1', { token, body: { command: ['sh', '-c', 'echo routed'], id: 'rp1' } });
    expect(started.status).toBe(201);
    const own = await api.request<{ processes: { id: string }[] }>('GET', '/api/v1/processes');
    expect(own.body.processes.map((p) => p.id)).toContain('rp1');
    const second = await viaControl<{ processes: { id: string }[] }>('GET', '/api/v1/processes', 'route-2', { token });
    expect(second.status).toBe(200);
    expect(second.body.processes.map((p) => p.id)).not.toContain('rp1');
  });

  it('streams a process over a WebSocket upgraded on the control port', async () => {
    await until(async () => (await api.request<{ status: string }>('GET', '/api/v1/processes/rp1')).body.status !== 'running');
    const ws = agentctl.url.replace('http:', 'ws:');
    const result = await collectStream(`${ws}/api/v1/processes/rp1/stream`, { authorization: `Bearer ${token}`, 'x-instance-id': 'route-1' });
    expect(result.rejectedStatus).toBeNull();
    const text = result.messages
      .filter((m): m is { type: string; chunk: { data: string } } => (m as { type?: string }).type === 'output')
      .map((m) => Buffer.from(m.chunk.data, 'base64').toString('utf8'))
      .join('');
    expect(text).toContain('routed');
  });

  it('keeps the instance authentication: no or a wrong token is 401, on requests and upgrades', async () => {
    expect((await viaControl('GET', '/api/v1/processes', 'route-1')).status).toBe(401);
    expect((await viaControl('GET', '/api/v1/processes', 'route-1', { token: 'f'.repeat(64) })).status).toBe(401);
    const ws = agentctl.url.replace('http:', 'ws:');
    const refused = await collectStream(`${ws}/api/v1/processes/rp1/stream`, { 'x-instance-id': 'route-1' });
    expect(refused.rejectedStatus).toBe(401);
  });

  it('answers 404 for an instance that does not exist, and 401 to a caller without the token', async () => {
    const missing = await viaControl('GET', '/api/v1/processes', 'no-such', { token });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: 'not_found' } });
    expect((await viaControl('GET', '/api/v1/processes', 'no-such')).status).toBe(401);
    const ws = agentctl.url.replace('http:', 'ws:');
    expect((await collectStream(`${ws}/api/v1/processes/x/stream`, { authorization: `Bearer ${token}`, 'x-instance-id': 'no-such' })).rejectedStatus).toBe(404);
  });

  it('leaves the control API as it was for requests that name no instance', async () => {
    const list = await agentctl.request<{ instances: { id: string }[] }>('GET', '/api/v1/instances', { token });
    expect(list.body.instances.map((i) => i.id).sort()).toEqual(['route-1', 'route-2']);
    const ws = agentctl.url.replace('http:', 'ws:');
    expect((await collectStream(`${ws}/api/v1/processes/rp1/stream`, { authorization: `Bearer ${token}` })).rejectedStatus).toBe(404);
  });

  it('stops routing to a deleted instance', async () => {
    expect((await agentctl.request('DELETE', '/api/v1/instances/route-2', { token })).status).toBe(204);
    expect((await viaControl('GET', '/api/v1/processes', 'route-2', { token })).status).toBe(404);
  });
});
