import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentctlProcess, cleanup, collectStream, createInstance, isAlive, killPids, tempDir, until, type InstanceApi } from '../support/agentctl.js';

interface Info {
  id: string;
  status: string;
  pid: number;
  exit_code: number | null;
  signal: string | null;
  next_seq: number;
  cwd: string;
  kind: string;
  orphaned: boolean;
}
interface Chunk {
  seq: number;
  stream: string;
  data: string;
}
interface Page {
  chunks: Chunk[];
  next: number;
  first_available: number;
  complete: boolean;
}

const workspace = tempDir();
let agentctl: AgentctlProcess;
let api: InstanceApi;

beforeAll(async () => {
  agentctl = await AgentctlProcess.start({ env: { AGENTCTL_MAX_PROCESSES: '3', AGENTCTL_MAX_OUTPUT_BYTES: '4096', AGENTCTL_STOP_GRACE_MS: '300' } });
  const token = await agentctl.handshake();
  api = await createInstance(agentctl, token, 'proc', workspace);
  mkdirSync(join(workspace, 'sub'));
});
const strays: number[] = [];
afterAll(async () => {
  killPids(strays);
  await cleanup(workspace);
});

const start = (body: unknown) => api.request<Info>('POST', '/api/v1/processes', { body });
const get = (id: string) => api.request<Info>('GET', `/api/v1/processes/${id}`);
const exited = (id: string) => until(async () => (await get(id)).body.status === 'exited');
const text = (chunks: Chunk[], stream?: string) =>
  chunks
    .filter((c) => stream === undefined || c.stream === stream)
    .map((c) => Buffer.from(c.data, 'base64').toString('utf8'))
    .join('');
async function allOutput(id: string, from = 0): Promise<Page> {
  return (await api.request<Page>('GET', `/api/v1/processes/${id}/output?from=${from}`)).body;
}

describe('agentctl processes', () => {
  it('runs argv without a shell, in a cwd inside the workspace, and records the exit code', async () => {
    const res = await start({ command: ['sh', '-c', 'pwd; echo err >&2; exit 7'], cwd: 'sub', kind: 'agent' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'running', cwd: 'sub', kind: 'agent', orphaned: false });
    await exited(res.body.id);
    const info = (await get(res.body.id)).body;
    expect(info).toMatchObject({ status: 'exited', exit_code: 7, signal: null });
    const page = await allOutput(res.body.id);
    expect(text(page.chunks, 'stdout').trim()).toMatch(/\/sub$/);
    expect(text(page.chunks, 'stderr')).toBe('err\n');
    expect(page.complete).toBe(true);
    expect(page.next).toBe(info.next_seq);
  });

  it('passes the process env and never the AGENTCTL_* variables', async () => {
    const res = await start({ command: ['sh', '-c', 'echo "$FOO:${AGENTCTL_BOOTSTRAP_NONCE:-none}:${AGENTCTL_PORT:-none}"'], env: { FOO: 'bar' } });
    await exited(res.body.id);
    expect(text((await allOutput(res.body.id)).chunks)).toBe('bar:none:none\n');
  });

  it('feeds stdin and closes it on eof', async () => {
    const res = await start({ command: ['cat'] });
    expect((await api.request('POST', `/api/v1/processes/${res.body.id}/stdin`, { body: { data: 'hello ' } })).status).toBe(204);
    const b64 = Buffer.from([0x77, 0x6f, 0x72, 0x6c, 0x64]).toString('base64');
    expect((await api.request('POST', `/api/v1/processes/${res.body.id}/stdin`, { body: { data: b64, encoding: 'base64', eof: true } })).status).toBe(204);
    await exited(res.body.id);
    expect((await get(res.body.id)).body.exit_code).toBe(0);
    expect(text((await allOutput(res.body.id)).chunks)).toBe('hello world');
    const late = await api.request('POST', `/api/v1/processes/${res.body.id}/stdin`, { body: { data: 'x' } });
    expect(late.status).toBe(409);
  });

  it('delivers signals to the process group', async () => {
    const res = await start({ command: ['sh', '-c', 'sleep 1000 & echo $!; wait'] });
    await until(async () => text((await allOutput(res.body.id)).chunks).includes('\n'));
    const grandchild = Number(text((await allOutput(res.body.id)).chunks).trim());
    strays.push(grandchild);
    expect((await api.request('POST', `/api/v1/processes/${res.body.id}/signal`, { body: { signal: 'SIGTERM' } })).status).toBe(204);
    await exited(res.body.id);
    expect((await get(res.body.id)).body).toMatchObject({ exit_code: null, signal: 'SIGTERM' });
    await until(() => !isAlive(grandchild));
    const late = await api.request('POST', `/api/v1/processes/${res.body.id}/signal`, { body: { signal: 'SIGTERM' } });
    expect(late.status).toBe(409);
  });

  it('rejects unknown signals and unknown processes', async () => {
    const res = await start({ command: ['true'] });
    const bad = await api.request('POST', `/api/v1/processes/${res.body.id}/signal`, { body: { signal: 'SIGFOO' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'bad_request', message: expect.stringContaining('signal') } });
    expect((await get('nope')).status).toBe(404);
    expect((await api.request('GET', '/api/v1/processes/nope/output')).status).toBe(404);
  });

  it('pages output from an offset with a limit', async () => {
    const res = await start({ command: ['sh', '-c', 'for i in 1 2 3 4 5; do echo $i; sleep 0.05; done'] });
    await exited(res.body.id);
    const all = await allOutput(res.body.id);
    expect(text(all.chunks)).toBe('1\n2\n3\n4\n5\n');
    const second = (await api.request<Page>('GET', `/api/v1/processes/${res.body.id}/output?from=1&limit=1`)).body;
    expect(second.chunks.map((c) => c.seq)).toEqual([1]);
    expect(second.next).toBe(2);
    expect(second.complete).toBe(false);
    const bad = await api.request('GET', `/api/v1/processes/${res.body.id}/output?from=-1`);
    expect(bad.status).toBe(400);
  });

  it('streams replay from an offset, then live output, then exit, over WebSocket', async () => {
    const res = await start({ command: ['sh', '-c', 'echo one; read line; echo "$line"; exit 3'] });
    await until(async () => (await get(res.body.id)).body.next_seq >= 1);
    const headers = { authorization: `Bearer ${api.token}`, 'x-instance-id': api.id };
    const stream = collectStream(`ws://127.0.0.1:${api.port}/api/v1/processes/${res.body.id}/stream?from=0`, headers, () => {
      void api.request('POST', `/api/v1/processes/${res.body.id}/stdin`, { body: { data: 'two\n' } });
    });
    const result = await stream;
    const outputs = result.messages.filter((m): m is { type: 'output'; chunk: Chunk } => (m as { type: string }).type === 'output');
    expect(text(outputs.map((m) => m.chunk))).toBe('one\ntwo\n');
    expect(outputs.map((m) => m.chunk.seq)).toEqual(outputs.map((_, i) => i));
    expect(result.messages.at(-1)).toEqual({ type: 'exit', exit_code: 3, signal: null, next: outputs.length });
    expect(result.closeCode).toBe(1000);

    const replay = await collectStream(`ws://127.0.0.1:${api.port}/api/v1/processes/${res.body.id}/stream?from=1`, headers);
    expect(replay.messages[0]).toMatchObject({ type: 'output', chunk: { seq: 1 } });
  });

  it('drops the oldest output past the retention cap and reports the gap', async () => {
    const res = await start({ command: ['sh', '-c', 'for i in $(seq 1 20); do printf "%0999d\\n" $i; sleep 0.02; done'] });
    await exited(res.body.id);
    const page = await allOutput(res.body.id);
    expect(page.first_available).toBeGreaterThan(0);
    expect(page.chunks[0]?.seq).toBe(page.first_available);
    // The cap (4096 bytes) holds, except that the newest chunk is always kept whole.
    const retained = text(page.chunks);
    expect(retained.length <= 4096 || page.chunks.length === 1, `${retained.length} bytes in ${page.chunks.length} chunks`).toBe(true);
    expect(retained.endsWith(`${'0'.repeat(997)}20\n`)).toBe(true);
    const headers = { authorization: `Bearer ${api.token}`, 'x-instance-id': api.id };
    const stream = await collectStream(`ws://127.0.0.1:${api.port}/api/v1/processes/${res.body.id}/stream?from=0`, headers);
    expect(stream.messages[0]).toEqual({ type: 'gap', from: 0, to: page.first_available });
  });

  it('treats a caller id as idempotent and refuses it for another command', async () => {
    const first = await start({ command: ['sleep', '1000'], id: 'fixed-id' });
    expect(first.status).toBe(201);
    const again = await start({ command: ['sleep', '1000'], id: 'fixed-id' });
    expect(again.status).toBe(200);
    expect(again.body.pid).toBe(first.body.pid);
    const other = await start({ command: ['sleep', '1'], id: 'fixed-id' });
    expect(other.status).toBe(409);
    await api.request('POST', '/api/v1/processes/fixed-id/signal', { body: { signal: 'SIGKILL' } });
    await exited('fixed-id');
  });

  it('refuses more running processes than the cap with 429', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await start({ command: ['sleep', '1000'] });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const over = await start({ command: ['sleep', '1000'] });
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ error: { code: 'too_many_processes' } });
    for (const id of ids) await api.request('POST', `/api/v1/processes/${id}/signal`, { body: { signal: 'SIGKILL' } });
    for (const id of ids) await exited(id);
    expect((await start({ command: ['true'] })).status).toBe(201);
  });

  it.each([
    ['a cwd outside the workspace', { command: ['true'], cwd: '../' }, 400, 'path_escape'],
    ['a missing cwd', { command: ['true'], cwd: 'missing' }, 400, 'not_a_directory'],
    ['an empty argv', { command: [] }, 400, 'bad_request'],
    ['a string command', { command: 'ls -la' }, 400, 'bad_request'],
  ])('rejects %s', async (_what, body, status, code) => {
    const res = await start(body);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ error: { code } });
  });

  it.each([
    ['does not exist', ['no-such-command-xyz'], 'ENOENT'],
    ['is not executable', ['./plain.txt'], 'EACCES'],
  ])('answers spawn_failed with the errno for a command that %s', async (_what, command, errno) => {
    writeFileSync(join(workspace, 'plain.txt'), 'not a program\n', { mode: 0o644 });
    const res = await start({ command });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'spawn_failed', message: `cannot start ${command[0]}: ${errno}`, errno } });
  });

  it('reads back the output of many exited processes (older ones come from disk)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await start({ command: ['echo', `run ${i}`] })).body.id);
    for (const id of ids) await exited(id);
    for (let round = 0; round < 2; round++) {
      for (const [i, id] of ids.entries()) {
        const page = await allOutput(id);
        expect(text(page.chunks), `process ${i}, round ${round}`).toBe(`run ${i}\n`);
        expect(page.complete).toBe(true);
      }
    }
  });

  it('lists every process of the instance', async () => {
    const list = await api.request<{ processes: Info[] }>('GET', '/api/v1/processes');
    expect(list.status).toBe(200);
    expect(list.body.processes.map((p) => p.id)).toContain('fixed-id');
  });

  it('kills a process that ignores SIGTERM when the instance is deleted', async () => {
    const res = await start({ command: ['sh', '-c', 'trap "" TERM; echo ready; while :; do sleep 0.1; done'] });
    await until(async () => (await get(res.body.id)).body.next_seq >= 1);
    const del = await agentctl.request('DELETE', '/api/v1/instances/proc', { token: api.token });
    expect(del.status).toBe(204);
    await until(() => !isAlive(res.body.pid));
  });
});
