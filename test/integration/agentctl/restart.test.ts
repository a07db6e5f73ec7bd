import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { AgentctlProcess, cleanup, collectStream, createInstance, isAlive, killPids, tempDir, until } from '../support/agentctl.js';

interface Info {
  id: string;
  status: string;
  pid: number;
  exit_code: number | null;
  signal: string | null;
  next_seq: number;
  orphaned: boolean;
}
interface Page {
  chunks: Array<{ seq: number; data: string }>;
  next: number;
  first_available: number;
  complete: boolean;
}

const dirs: string[] = [];
const strays: number[] = [];
afterAll(async () => {
  killPids(strays);
  await cleanup(...dirs);
});

function workspace(): string {
  const dir = tempDir();
  dirs.push(dir);
  return dir;
}

const decode = (chunks: Page['chunks']): string => chunks.map((c) => Buffer.from(c.data, 'base64').toString('utf8')).join('');

describe('agentctl restart', () => {
  it('keeps output and exit status across a crash; running processes come back orphaned and replayable', async () => {
    const ws = workspace();
    spawnSync('git', ['init', '-q', ws]);
    const agentctl = await AgentctlProcess.start();
    let token = await agentctl.handshake();
    let api = await createInstance(agentctl, token, 'survivor', ws);

    const done = await api.request<Info>('POST', '/api/v1/processes', { body: { command: ['sh', '-c', 'echo a; echo b; exit 4'], id: 'done' } });
    await until(async () => (await api.request<Info>('GET', '/api/v1/processes/done')).body.status === 'exited');
    const live = await api.request<Info>('POST', '/api/v1/processes', {
      body: { command: ['sh', '-c', 'for i in 1 2 3; do echo line$i; sleep 0.05; done; exec sleep 1000'], id: 'live' },
    });
    strays.push(live.body.pid);
    await until(async () => decode((await api.request<Page>('GET', '/api/v1/processes/live/output')).body.chunks) === 'line1\nline2\nline3\n');
    const before = (await api.request<Page>('GET', '/api/v1/processes/live/output')).body;

    await agentctl.restart('SIGKILL');
    token = await agentctl.handshake();
    api = await createInstance(agentctl, token, 'survivor', ws);

    const list = (await api.request<{ processes: Info[] }>('GET', '/api/v1/processes')).body.processes;
    const byId = new Map(list.map((p) => [p.id, p]));
    expect(byId.get('done')).toMatchObject({ status: 'exited', exit_code: 4, orphaned: false, pid: done.body.pid });
    expect(byId.get('live')).toMatchObject({ status: 'exited', exit_code: null, orphaned: true, next_seq: before.next });
    await until(() => !isAlive(live.body.pid));

    // Replay from every offset gives exactly the chunks (same seq, bytes and time) seen before the crash.
    for (let from = 0; from <= before.next; from++) {
      const page = (await api.request<Page>('GET', `/api/v1/processes/live/output?from=${from}`)).body;
      expect(page.chunks, `from=${from}`).toEqual(before.chunks.filter((c) => c.seq >= from));
      expect(page.complete).toBe(true);
    }
    expect(decode((await api.request<Page>('GET', '/api/v1/processes/done/output')).body.chunks)).toBe('a\nb\n');

    const stream = await collectStream(`ws://127.0.0.1:${api.port}/api/v1/processes/done/stream?from=1`, {
      authorization: `Bearer ${token}`,
      'x-instance-id': 'survivor',
    });
    expect(stream.messages.map((m) => (m as { type: string }).type)).toEqual([...Array(stream.messages.length - 1).fill('output'), 'exit']);
    expect(stream.messages.at(-1)).toMatchObject({ type: 'exit', exit_code: 4 });

    // Same caller id after the restart: the recorded process is returned, not started again.
    const again = await api.request<Info>('POST', '/api/v1/processes', { body: { command: ['sh', '-c', 'echo a; echo b; exit 4'], id: 'done' } });
    expect(again.status).toBe(200);

    // The state directory does not show up in git status.
    const status = await api.request<{ files: Array<{ path: string }>; clean: boolean }>('GET', '/api/v1/git/status');
    expect(status.body.files).toEqual([]);
    expect(existsSync(join(ws, '.agentctl/state/survivor/processes/done/meta.json'))).toBe(true);
  });

  it('uses AGENTCTL_STATE_DIR when set, outside the workspace', async () => {
    const ws = workspace();
    const state = workspace();
    const agentctl = await AgentctlProcess.start({ env: { AGENTCTL_STATE_DIR: state } });
    const api = await createInstance(agentctl, await agentctl.handshake(), 'elsewhere', ws);
    await api.request('POST', '/api/v1/processes', { body: { command: ['true'], id: 'p' } });
    await until(() => existsSync(join(state, 'elsewhere/processes/p/meta.json')));
    expect(JSON.parse(readFileSync(join(state, 'elsewhere/processes/p/meta.json'), 'utf8'))).toMatchObject({ id: 'p' });
    expect(existsSync(join(ws, '.agentctl'))).toBe(false);
  });

  it('stops cleanly on SIGTERM: children get SIGTERM (then SIGKILL) and agentctl exits 0', async () => {
    const ws = workspace();
    const agentctl = await AgentctlProcess.start({ env: { AGENTCTL_STOP_GRACE_MS: '2000' } });
    const token = await agentctl.handshake();
    const api = await createInstance(agentctl, token, 'term', ws);
    const polite = await api.request<Info>('POST', '/api/v1/processes', { body: { command: ['sleep', '1000'], id: 'polite' } });
    const stubborn = await api.request<Info>('POST', '/api/v1/processes', {
      body: { command: ['sh', '-c', 'trap "" TERM; echo ready; while :; do sleep 0.1; done'], id: 'stubborn' },
    });
    strays.push(polite.body.pid, stubborn.body.pid);
    await until(async () => (await api.request<Info>('GET', '/api/v1/processes/stubborn')).body.next_seq >= 1);

    expect(await agentctl.stop('SIGTERM')).toBe(0);
    expect(isAlive(polite.body.pid)).toBe(false);
    await until(() => !isAlive(stubborn.body.pid));
    expect(agentctl.stderr).toContain('process ignored SIGTERM; sending SIGKILL');

    // After a clean stop nothing is orphaned: the exit was recorded.
    await agentctl.restart();
    const again = await createInstance(agentctl, await agentctl.handshake(), 'term', ws);
    const list = (await again.request<{ processes: Info[] }>('GET', '/api/v1/processes')).body.processes;
    expect(list.find((p) => p.id === 'polite')).toMatchObject({ status: 'exited', signal: 'SIGTERM', orphaned: false });
    expect(list.find((p) => p.id === 'stubborn')).toMatchObject({ status: 'exited', signal: 'SIGKILL', orphaned: false });
  });
});
