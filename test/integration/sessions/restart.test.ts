import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../../src/controller/index.js';
import { InventoryStore } from '../../../src/inventory/index.js';
import {
  agentctlBundle,
  agentctlPids,
  execText,
  FAST_AGENT_ENV,
  makeRepo,
  outputSoFar,
  processesWithCwd,
  startController,
  teardownController,
  tempDir,
  until,
  waitForOutput,
} from './helpers.js';

async function recordedAgentctlPid(dataDir: string, sessionId: string): Promise<number> {
  const store = InventoryStore.open({ dataDir });
  try {
    return Number((await store.getRuntime(sessionId))?.metadata.local_agentctl_pid);
  } finally {
    await store.close();
  }
}

describe('Controller restart with sessions running', () => {
  let work: string;
  let dataDir: string;
  let agentctl: string;
  let c: Controller;

  beforeAll(async () => {
    work = tempDir('restart');
    dataDir = join(work, 'data');
    agentctl = agentctlBundle(work);
    c = await startController(dataDir, agentctl);
  });

  afterAll(() => teardownController(c, dataDir, work, 'no agentctl or agent process may outlive its session'));

  it('reconnects to a running agentctl, replays the output and does not start the agent twice; revives a dead agentctl with a fresh nonce', async () => {
    const a = await c.launch({ repository: { path: makeRepo(work, 'a', 'marker-a') }, env: FAST_AGENT_ENV });
    const b = await c.launch({ repository: { path: makeRepo(work, 'b', 'marker-b') }, env: FAST_AGENT_ENV });
    expect((await c.waitUntilSettled(a.id)).state).toBe('ready');
    expect((await c.waitUntilSettled(b.id)).state).toBe('ready');
    await waitForOutput(c, a.id, /ready for instructions/);
    await waitForOutput(c, b.id, /ready for instructions/);
    await c.sendInput(a.id, 'before restart\n');
    await waitForOutput(c, a.id, /you said: before restart/);
    const wsA = (await c.get(a.id)).workspacePath!;
    const wsB = (await c.get(b.id)).workspacePath!;
    const pidA = await recordedAgentctlPid(dataDir, a.id);
    const pidB = await recordedAgentctlPid(dataDir, b.id);

    // the controller goes away; the detached agentctls keep running
    await c.close();
    expect(agentctlPids(dataDir).sort()).toEqual([pidA, pidB].sort());
    // … and one of them dies while the controller is down
    process.kill(pidB, 'SIGKILL');

    c = await startController(dataDir, agentctl);
    const viewA = await c.get(a.id);
    const viewB = await c.get(b.id);
    expect(viewA.state).toBe('ready');
    expect(viewB.state).toBe('ready');

    // A: same agentctl, same agent, full output replayed
    expect(await recordedAgentctlPid(dataDir, a.id)).toBe(pidA);
    expect(viewA.agentProcess).toMatchObject({ id: 'agent-1', status: 'running' });
    expect(processesWithCwd(wsA), 'exactly one agent in A').toHaveLength(1);
    const replay = await outputSoFar(c, a.id);
    expect(replay).toContain('agent> marker: marker-a');
    expect(replay).toContain('you said: before restart');
    await c.sendInput(a.id, 'after restart\n');
    await waitForOutput(c, a.id, /you said: after restart/);

    // B: agentctl restarted with a fresh nonce, the instance re-created with the same id; the
    // agent died with the old agentctl: it is reported lost and NOT re-run by itself (issue 7 item 4)
    const newPidB = await recordedAgentctlPid(dataDir, b.id);
    expect(newPidB).not.toBe(pidB);
    expect(viewB.agentProcess).toMatchObject({ id: 'agent-1', status: 'lost' });
    expect(viewB.agentProcess?.lostReason).toMatch(/agentctl/);
    expect(processesWithCwd(wsB), 'no agent re-run in B').toHaveLength(0);
    expect((await execText(c, b.id, ['cat', 'BERTH_MARKER'])).stdout).toBe('marker-b\n');

    const store = InventoryStore.open({ dataDir });
    try {
      expect((await store.listRuntime()).map((r) => [r.sessionId, r.state]).sort()).toEqual([[a.id, 'ready'], [b.id, 'ready']].sort());
    } finally {
      await store.close();
    }

    // a second restart right away changes nothing
    await c.close();
    c = await startController(dataDir, agentctl);
    expect((await c.get(a.id)).agentProcess?.id).toBe('agent-1');
    expect((await c.get(b.id)).agentProcess, 'still lost after another restart').toMatchObject({ id: 'agent-1', status: 'lost' });
    expect(agentctlPids(dataDir)).toHaveLength(2);
    expect(processesWithCwd(wsA)).toHaveLength(1);
    expect(processesWithCwd(wsB)).toHaveLength(0);

    // only an explicit resume starts B's agent again
    const resumed = await c.resume(b.id);
    expect(resumed.agentProcess).toMatchObject({ id: 'agent-2', status: 'running' });
    await waitForOutput(c, b.id, /ready for instructions/);
    expect(processesWithCwd(wsB), 'exactly one agent in B').toHaveLength(1);
  });

  it('recovers a stopped session as stopped (nothing started) and resumes it later', async () => {
    const s = await c.launch({ repository: { path: makeRepo(work, 'c', 'marker-c') }, env: FAST_AGENT_ENV });
    expect((await c.waitUntilSettled(s.id)).state).toBe('ready');
    await c.stop(s.id);
    const before = agentctlPids(dataDir).length;
    await c.close();
    c = await startController(dataDir, agentctl);
    expect((await c.get(s.id)).state).toBe('stopped');
    expect(agentctlPids(dataDir)).toHaveLength(before);
    expect((await c.resume(s.id)).state).toBe('ready');
    await c.remove(s.id);
  });

  it('does not run an agent that finished again when the controller restarts (agentctl kept running)', async () => {
    const s = await c.launch({ repository: { path: makeRepo(work, 'e', 'marker-e') }, env: FAST_AGENT_ENV });
    expect((await c.waitUntilSettled(s.id)).state).toBe('ready');
    await waitForOutput(c, s.id, /ready for instructions/);
    await c.sendInput(s.id, '', { eof: true }); // the agent finishes its task and exits
    await waitForOutput(c, s.id, /stdin closed, done/);
    await until(async () => ((await c.get(s.id)).agentProcess?.status === 'exited' ? true : undefined), 'agent exited');
    await c.close();
    c = await startController(dataDir, agentctl);
    const view = await c.get(s.id);
    expect(view.state).toBe('ready');
    expect(view.agentProcess, 'the finished agent is reported, not started again').toMatchObject({ id: 'agent-1', status: 'exited', exitCode: 0 });
    const output = await outputSoFar(c, s.id);
    expect(output.match(/agent> starting/g), 'the agent ran once').toHaveLength(1);
    expect(processesWithCwd(view.workspacePath!)).toHaveLength(0);
    await c.remove(s.id);
  });

  it('revives a session on demand when its agentctl dies while the controller runs', async () => {
    const s = await c.launch({ repository: { path: makeRepo(work, 'd', 'marker-d') }, env: FAST_AGENT_ENV });
    const ready = await c.waitUntilSettled(s.id);
    expect(ready.state).toBe('ready');
    await waitForOutput(c, s.id, /ready for instructions/);
    const pid = await recordedAgentctlPid(dataDir, s.id);
    process.kill(pid, 'SIGKILL');
    // status notices at once: the agent is lost, not "running"
    const seen = await c.get(s.id);
    expect(seen.agentProcess).toMatchObject({ id: 'agent-1', status: 'lost' });
    // the next call finds agentctl unreachable, re-attaches (agentctl restarted with the recorded
    // nonce) and runs — without re-running the agent
    expect((await execText(c, s.id, ['cat', 'BERTH_MARKER'])).stdout).toBe('marker-d\n');
    expect(await recordedAgentctlPid(dataDir, s.id)).not.toBe(pid);
    const view = await c.get(s.id);
    expect(view.state).toBe('ready');
    expect(view.agentProcess).toMatchObject({ id: 'agent-1', status: 'lost' });
    expect(view.stages.map((st) => st.name), 'a re-attach is no relaunch: the launch stages are kept').toContain('agent_start');
    expect(processesWithCwd(ready.workspacePath!), 'the agent is not re-run').toHaveLength(0);
    const logs = await outputSoFar(c, s.id);
    expect(logs.match(/agent> starting/g), 'the first run\'s output is still served, once').toHaveLength(1);
    // an explicit resume starts it again
    expect((await c.resume(s.id)).agentProcess).toMatchObject({ id: 'agent-2', status: 'running' });
    await waitForOutput(c, s.id, /ready for instructions/);
    expect(processesWithCwd(ready.workspacePath!)).toHaveLength(1);
    await c.remove(s.id);
  });

  it('ends an exec at once, saying why, when agentctl dies while the command runs (not after a long retry)', async () => {
    const s = await c.launch({ repository: { path: makeRepo(work, 'f', 'marker-f') }, env: FAST_AGENT_ENV });
    expect((await c.waitUntilSettled(s.id)).state).toBe('ready');
    const pid = await recordedAgentctlPid(dataDir, s.id);
    let started = false;
    const running = c
      .exec(s.id, ['sh', '-c', 'echo started; sleep 60'], { onOutput: () => (started = true) })
      .then(
        () => null,
        (e: unknown) => e,
      );
    await until(async () => (started ? true : undefined), 'the command started');
    process.kill(pid, 'SIGKILL');
    const err = await running;
    expect(String(err)).toMatch(/agentctl stopped while `sh` ran, so its exit status is unknown/);
    // the next command re-attaches (agentctl restarted with the recorded nonce)
    expect((await execText(c, s.id, ['cat', 'BERTH_MARKER'])).stdout).toBe('marker-f\n');
    await c.remove(s.id);
  });
});
