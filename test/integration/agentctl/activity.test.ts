/**
 * `GET …/activity` against the built agentctl with real agents: a session is idle only by the
 * agent's real state (children, shells and execs, input, ACP turns and permissions), never by API
 * silence. Each case has its own instance, so one case's input or processes do not reach another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentctlHttpError, InstanceClient } from '../../../src/agentctl-client/index.js';
import type { ActivityReport } from '../../../src/protocol/index.js';
import { agentProcesses, commandOf, readProcTable } from '../../../src/agentctl/activity/procs.js';
import { AgentctlProcess, BUNDLE, cleanup, createInstance, killPids, requestJson, tempDir, until } from '../support/agentctl.js';

const workspace = tempDir();
let agentctl: AgentctlProcess;
let token: string;

beforeAll(async () => {
  agentctl = await AgentctlProcess.start({ instancePortCount: 10, env: { AGENTCTL_STOP_GRACE_MS: '300' } });
  token = await agentctl.handshake();
});
afterAll(() => cleanup(workspace));

async function instance(id: string): Promise<InstanceClient> {
  const api = await createInstance(agentctl, token, id, workspace);
  return new InstanceClient({ baseUrl: api.url, token: api.token, instanceId: api.id });
}

/** Polls the report (window `windowMs`) until `check` holds, and returns that report. */
async function waitFor(client: InstanceClient, windowMs: number, check: (r: ActivityReport) => boolean): Promise<ActivityReport> {
  let report = await client.activity({ windowMs });
  await until(async () => {
    report = await client.activity({ windowMs });
    return check(report);
  });
  return report;
}

const idle = (r: ActivityReport): boolean => r.idle;
const kinds = (r: ActivityReport): string[] => r.busy.map((b) => b.kind);
/** The report's own invariant: idle means the last activity ended at least a window ago. */
function expectIdleFor(r: ActivityReport): void {
  expect(r).toMatchObject({ idle: true, busy: [] });
  expect(r.idle_since).not.toBeNull();
  expect(Date.parse(r.at) - Date.parse(r.idle_since as string)).toBeGreaterThanOrEqual(r.window_ms);
}

describe('agentctl activity', () => {
  it('keeps a raw agent with a sleeping child busy whatever the window, and idle once the child is gone', async () => {
    const client = await instance('act-child');
    await client.startProcess({ id: 'agent-1', kind: 'agent', command: ['sh', '-c', 'sleep 30; exec cat >/dev/null'] });
    const busy = await waitFor(client, 50, (r) => kinds(r).includes('child-process'));
    expect(busy.idle).toBe(false);
    const child = busy.busy.find((b) => b.kind === 'child-process');
    expect(child?.detail).toMatch(/^sleep 30 \(pid \d+\)$/);
    killPids([Number(/pid (\d+)/.exec(child?.detail ?? '')?.[1])]);
    expectIdleFor(await waitFor(client, 50, idle));
    expect((await client.getProcess('agent-1')).status).toBe('running');
  });

  it('counts a background child whose parent exited (still in the agent\'s session)', async () => {
    const client = await instance('act-orphan');
    await client.startProcess({ id: 'agent-1', kind: 'agent', command: ['sh', '-c', '(sleep 31 &); exec cat >/dev/null'] });
    const busy = await waitFor(client, 50, (r) => r.busy.some((b) => b.kind === 'child-process' && b.detail.startsWith('sleep 31 ')));
    killPids([Number(/pid (\d+)/.exec(busy.busy.find((b) => b.kind === 'child-process')?.detail ?? '')?.[1])]);
    expectIdleFor(await waitFor(client, 50, idle));
  });

  it('is busy while an exec or a shell is open', async () => {
    const client = await instance('act-exec');
    await client.startProcess({ id: 'agent-1', kind: 'agent', command: ['sh', '-c', 'exec cat >/dev/null'] });
    await client.startProcess({ id: 'p-exec', command: ['sleep', '30'] });
    await client.startProcess({ id: 'shell-x', command: ['sh', '-c', 'exec sleep 30', 'berth-shell'] });
    const busy = await client.activity({ windowMs: 50 });
    expect(busy.idle).toBe(false);
    expect(busy.busy).toEqual(expect.arrayContaining([
      { kind: 'exec', detail: 'sleep 30 (p-exec) is running' },
      { kind: 'shell', detail: 'shell shell-x is open' },
    ]));
    await client.signal('p-exec', 'SIGKILL');
    await client.signal('shell-x', 'SIGKILL');
    expectIdleFor(await waitFor(client, 50, idle));
  });

  it('restarts the window with input, and reads are no activity', async () => {
    const client = await instance('act-input');
    await client.startProcess({ id: 'agent-1', kind: 'agent', command: ['sh', '-c', 'exec cat >/dev/null'] });
    const before = await waitFor(client, 50, idle);
    await client.listProcesses();
    await client.readOutput('agent-1');
    await client.writeStdin('agent-1', 'hello\n');
    const after = await client.activity({ windowMs: 24 * 60 * 60_000 });
    expect(after.busy).toContainEqual({ kind: 'input', detail: expect.stringMatching(/^stdin written to agent-1 /) as string });
    const again = await waitFor(client, 50, idle);
    expectIdleFor(again);
    expect(Date.parse(again.idle_since as string)).toBeGreaterThan(Date.parse(before.idle_since as string));
  });

  it('is busy while an ACP turn is in flight and while it waits for a permission', async () => {
    const client = await instance('act-acp');
    const command = [process.execPath, BUNDLE, 'demo-acp-agent'];
    await client.startProcess({ id: 'agent-1', kind: 'agent', protocol: 'acp', command, env: { BERTH_DEMO_STEP_MS: '0' }, prompt: 'write NOTES.md' });
    const waiting = await waitFor(client, 50, (r) => kinds(r).includes('permission'));
    expect(waiting.busy).toEqual(expect.arrayContaining([
      { kind: 'turn', detail: 'a turn of agent-1 is in flight' },
      { kind: 'permission', detail: '1 permission request of agent-1 pending' },
    ]));
    const [request] = await client.acp.permissions('agent-1');
    await client.acp.answer('agent-1', request?.id ?? '', { decision: 'deny' });
    expectIdleFor(await waitFor(client, 50, idle));
  });

  it('does not count what an ACP adapter started before its session opened', async () => {
    const client = await instance('act-helper');
    // the helper starts before the agent (sh execs into it, keeping the pid) opens its ACP session
    const command = ['sh', '-c', 'sleep 32 & exec "$0" "$1" demo-acp-agent', process.execPath, BUNDLE];
    const agent = await client.startProcess({ id: 'agent-1', kind: 'agent', protocol: 'acp', command });
    await until(async () => (await client.getProcess('agent-1')).acp?.session_id != null);
    expectIdleFor(await waitFor(client, 50, idle));
    const helpers = agentProcesses(readProcTable(), agent.pid as number, null).map(commandOf);
    expect(helpers, 'the helper was alive all along').toContain('sleep 32');
    await client.signal('agent-1', 'SIGKILL');
  });

  it('refuses a window out of bounds, naming the parameter', async () => {
    const client = await instance('act-window');
    for (const windowMs of [0, 24 * 60 * 60_000 + 1]) {
      const err = await client.activity({ windowMs }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AgentctlHttpError);
      expect(err).toMatchObject({ status: 400, code: 'bad_request', serverMessage: expect.stringContaining('window_ms') as string });
    }
    expect((await client.activity()).window_ms).toBe(5 * 60_000);
  });

  it('needs the token (401) and the instance\'s id (403) like every instance route', async () => {
    const client = await instance('act-auth');
    const url = `${client.baseUrl}/api/v1/activity`;
    expect((await requestJson(url, 'GET', { headers: { 'x-instance-id': 'act-auth' } })).status).toBe(401);
    expect((await requestJson(url, 'GET', { token, headers: { 'x-instance-id': 'act-window' } })).status).toBe(403);
  });
});
