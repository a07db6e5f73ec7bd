import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startWithInstance, tempDir, type AgentctlProcess, type InstanceApi } from '../support/agentctl.js';

const ws = tempDir();
let agentctl: AgentctlProcess;
let token: string;
let api: InstanceApi;

beforeAll(async () => {
  ({ agentctl, token, api } = await startWithInstance('bodies', ws));
});
afterAll(() => cleanup(ws));

async function stillServing(): Promise<void> {
  expect((await agentctl.request('GET', '/health')).status).toBe(200);
  expect((await api.request('GET', '/health')).status).toBe(200);
}

describe('agentctl request validation', () => {
  it.each([
    ['malformed JSON', '{"id": "x",', 'malformed JSON'],
    ['a JSON array', '[1,2]', 'expected object'],
    ['JSON null', 'null', 'expected object'],
    ['a wrong type', JSON.stringify({ id: 'x', workspace_path: 42 }), 'workspace_path: '],
    ['a missing field', JSON.stringify({ id: 'x' }), 'workspace_path'],
    ['an unknown field', JSON.stringify({ id: 'x', workspace_path: '/tmp', extra: true }), '"extra"'],
    ['a bad env name', JSON.stringify({ id: 'x', workspace_path: '/tmp', env: { 'BAD-NAME': '1' } }), 'env.BAD-NAME'],
  ])('answers 400 for %s and names the problem', async (_what, rawBody, mention) => {
    const res = await agentctl.request<{ error: { code: string; message: string } }>('POST', '/api/v1/instances', {
      token,
      rawBody,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
    expect(res.body.error.message).toContain(mention);
    await stillServing();
  });

  it('names the field of a wrong type in a nested request', async () => {
    const res = await api.request<{ error: { message: string } }>('POST', '/api/v1/processes', { body: { command: 'ls' } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/command: .*expected array/);
  });

  it('answers 413 for a body over the limit and keeps serving', async () => {
    const huge = JSON.stringify({ path: 'big.txt', content: 'x'.repeat(16 * 1024 * 1024 + 10) });
    const res = await api.request('PUT', '/api/v1/files/content', { rawBody: huge, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: { code: 'body_too_large' } });
    await stillServing();
  });

  it('refuses an absurd declared Content-Length without reading it', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port: api.port,
        method: 'PUT',
        path: '/api/v1/files/content',
        headers: { authorization: `Bearer ${token}`, 'x-instance-id': api.id, 'content-length': String(10 * 1024 * 1024 * 1024) },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write('{"path":');
    });
    expect(status).toBe(413);
    await stillServing();
  });

  it('answers 404 for unknown routes and 405 with Allow for a wrong method', async () => {
    const unknown = await api.request('GET', '/api/v2/whatever');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: { code: 'not_found' } });
    const wrong = await api.request('PATCH', '/api/v1/files/content');
    expect(wrong.status).toBe(405);
    expect(wrong.body).toMatchObject({ error: { code: 'method_not_allowed' } });
    expect(wrong.headers.get('allow')).toBe('GET, PUT, DELETE');
    expect((await agentctl.request('PUT', '/health', { token })).status).toBe(405);
    expect((await agentctl.request('PUT', '/health')).status, 'unauthenticated callers cannot map routes').toBe(401);
  });

  it('answers 400 for bad query parameters and malformed percent-encoding', async () => {
    expect((await api.request('GET', '/api/v1/files/content')).status).toBe(400);
    expect((await api.request('GET', '/api/v1/git/log?limit=abc')).status).toBe(400);
    expect((await api.request('GET', '/api/v1/processes/%E0%A4%A')).status).toBe(400);
    expect((await api.request('PUT', '/api/v1/files/content', { body: { path: 'x', content: '!!!', encoding: 'base64' } })).status).toBe(400);
    await stillServing();
  });
});
