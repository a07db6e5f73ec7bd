import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentctlProcess, cleanup, InstanceApi, isAlive, tempDir, until } from '../support/agentctl.js';

interface Info {
  id: string;
  port: number;
  workspace_path: string;
  status: string;
  labels: Record<string, string>;
}

const ws1 = tempDir();
const ws2 = tempDir();
let agentctl: AgentctlProcess;
let token: string;

beforeAll(async () => {
  agentctl = await AgentctlProcess.start({ instancePortCount: 6 });
  token = await agentctl.handshake();
});
afterAll(() => cleanup(ws1, ws2));

const create = (body: unknown) => agentctl.request<Info>('POST', '/api/v1/instances', { token, body });

describe('agentctl instances', () => {
  it('creates an instance on a port from the configured list, then returns it again for the same id and workspace', async () => {
    const first = await create({ id: 'same', workspace_path: ws1, labels: { task: 't1' } });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ id: 'same', workspace_path: ws1, status: 'running', labels: { task: 't1' } });
    expect(agentctl.instancePorts).toContain(first.body.port);

    const again = await create({ id: 'same', workspace_path: ws1 });
    expect(again.status).toBe(200);
    expect(again.body.port).toBe(first.body.port);

    const got = await agentctl.request<Info>('GET', '/api/v1/instances/same', { token });
    expect(got.body).toEqual(first.body);
    const list = await agentctl.request<{ instances: Info[] }>('GET', '/api/v1/instances', { token });
    expect(list.body.instances.map((i) => i.id)).toContain('same');
  });

  it('answers 409 for the same id with another workspace', async () => {
    await create({ id: 'conflict', workspace_path: ws1 });
    const res = await create({ id: 'conflict', workspace_path: ws2 });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: { code: 'conflict' } });
  });

  it('creates exactly one instance for concurrent creates of one id', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => create({ id: 'racy', workspace_path: ws2 })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.port)).size).toBe(1);
    const list = await agentctl.request<{ instances: Info[] }>('GET', '/api/v1/instances', { token });
    expect(list.body.instances.filter((i) => i.id === 'racy')).toHaveLength(1);
  });

  it.each([
    ['a missing workspace', { id: 'bad1', workspace_path: '/definitely/not/here' }, 'bad_request'],
    ['a relative workspace', { id: 'bad2', workspace_path: 'relative/dir' }, 'bad_request'],
    ['an invalid id', { id: '../etc', workspace_path: '/tmp' }, 'bad_request'],
    ['an unknown field', { id: 'bad3', workspace_path: '/tmp', agent: 'x' }, 'bad_request'],
  ])('rejects %s with 400', async (_what, body, code) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code } });
  });

  it('rejects a workspace that is a file', async () => {
    const file = join(ws1, 'a-file');
    writeFileSync(file, 'x');
    const res = await create({ id: 'file-ws', workspace_path: file });
    expect(res.status).toBe(400);
  });

  it('answers 404 for an unknown instance', async () => {
    expect((await agentctl.request('GET', '/api/v1/instances/nope', { token })).status).toBe(404);
    expect((await agentctl.request('DELETE', '/api/v1/instances/nope', { token })).status).toBe(404);
  });

  it('skips instance ports that are in use', async () => {
    const used = agentctl.instancePorts.at(-1) as number;
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(used, '127.0.0.1', r));
    let filled = 0;
    try {
      const ports: number[] = [];
      for (;;) {
        const res = await create({ id: `fill-${filled}`, workspace_path: ws2 });
        if (res.status !== 201) {
          expect(res.status).toBe(503);
          expect(res.body).toMatchObject({ error: { code: 'unavailable', message: expect.stringContaining('port') } });
          break;
        }
        ports.push(res.body.port);
        filled++;
      }
      expect(ports.length).toBeGreaterThan(0);
      expect(ports).not.toContain(used);
    } finally {
      await new Promise((r) => blocker.close(r));
      for (let i = 0; i < filled; i++) await agentctl.request('DELETE', `/api/v1/instances/fill-${i}`, { token });
    }
  });

  it('deletes an instance: stops its processes, closes its server and frees the port', async () => {
    const created = await create({ id: 'doomed', workspace_path: ws1 });
    const api = new InstanceApi(created.body.port, token, 'doomed');
    const proc = await api.request<{ pid: number }>('POST', '/api/v1/processes', { body: { command: ['sleep', '1000'] } });
    expect(proc.status).toBe(201);

    const del = await agentctl.request('DELETE', '/api/v1/instances/doomed', { token });
    expect(del.status).toBe(204);
    await until(() => !isAlive(proc.body.pid));
    await expect(api.request('GET', '/health')).rejects.toThrow();
    expect((await agentctl.request('GET', '/api/v1/instances/doomed', { token })).status).toBe(404);

    const recreated = await create({ id: 'doomed-2', workspace_path: ws1 });
    expect(recreated.status).toBe(201);
  });
});
