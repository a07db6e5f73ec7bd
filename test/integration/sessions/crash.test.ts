import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../../src/controller/index.js';
import { LAUNCH_CHECKPOINTS } from '../../../src/controller/index.js';
import { InventoryStore } from '../../../src/inventory/index.js';
import {
  agentctlBundle,
  agentctlPids,
  cleanup,
  killLeftovers,
  makeRepo,
  processesWithCwd,
  ROOT,
  startController,
  tempDir,
  waitForOutput,
} from './helpers.js';

const CHILD = join(ROOT, 'test/integration/sessions/fixtures/crash-child.ts');

/** Runs a controller in a child process that kills itself (exit 137) right after `checkpoint`. */
function crashChild(env: Record<string, string>, checkpoint: string): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync(process.execPath, ['--import', 'tsx', CHILD], {
    cwd: ROOT,
    env: { ...process.env, ...env, BERTH_TEST_HOOKS: '1', BERTH_TEST_CRASH_AT: checkpoint },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

async function inventory(dataDir: string) {
  const store = InventoryStore.open({ dataDir });
  try {
    return { sessions: await store.listSessions(), runtime: await store.listRuntime(), secrets: await store.listSecretIds() };
  } finally {
    await store.close();
  }
}

describe('kill -9 of the controller at every launch checkpoint', () => {
  let work: string;
  let agentctl: string;
  const dataDirs: string[] = [];
  let c: Controller | undefined;

  beforeAll(() => {
    work = tempDir('crash');
    agentctl = agentctlBundle(work);
  });

  afterAll(async () => {
    await c?.close();
    let leaked = 0;
    for (const d of dataDirs) leaked += killLeftovers(d);
    cleanup(work);
    expect(leaked, 'no agentctl or agent process may be left behind').toBe(0);
  });

  it.each(LAUNCH_CHECKPOINTS.map((cp) => [cp]))('after a crash at %s the session is ready or cleanly rolled back', async (checkpoint) => {
    const dataDir = join(work, `data-${checkpoint}`);
    dataDirs.push(dataDir);
    const repo = makeRepo(work, `repo-${checkpoint}`, `marker-${checkpoint}`);
    const child = crashChild({ CHILD_DATA_DIR: dataDir, CHILD_AGENTCTL: agentctl, CHILD_REPO: repo }, checkpoint);
    expect(child.status, `the child must die at ${checkpoint} (stderr: ${child.stderr.slice(-500)})`).toBe(137);
    const id = /session (s-[0-9a-f]+)/.exec(child.stdout)?.[1] ?? (await inventory(dataDir)).sessions[0]?.id;
    expect(id).toBeDefined();

    c = await startController(dataDir, agentctl);
    const view = await c.get(id!);
    const after = await inventory(dataDir);
    expect(after.sessions).toHaveLength(1);
    const reachedReady = LAUNCH_CHECKPOINTS.indexOf(checkpoint) >= LAUNCH_CHECKPOINTS.indexOf('ready');

    if (reachedReady) {
      expect(view.error).toBeNull();
      expect(view.state).toBe('ready');
      expect(after.runtime.map((r) => r.state)).toEqual(['ready']);
      expect(after.secrets).toHaveLength(2);
      expect(agentctlPids(dataDir)).toHaveLength(1);
      await waitForOutput(c, id!, /ready for instructions/);
      expect(processesWithCwd(view.workspacePath!), 'the agent runs exactly once').toHaveLength(1);
    } else {
      expect(view.state).toBe('failed');
      expect(view.error?.message).toMatch(/interrupted by a controller restart/);
      expect(after.runtime, 'the provisional row is released').toEqual([]);
      expect(after.secrets, 'no secret outlives its launch').toEqual([]);
      expect(agentctlPids(dataDir), 'the agentctl of the cut-short launch is stopped').toEqual([]);
      const ws = join(dataDir, 'workspaces');
      expect(existsSync(ws) ? readdirSync(ws) : [], 'the workspace the launch created is removed').toEqual([]);
      // cleanly rolled back: it can be launched again
      const resumed = await c.resume(id!);
      expect(resumed.error).toBeNull();
      expect(resumed.state).toBe('ready');
    }
    await c.remove(id!);
    expect(agentctlPids(dataDir)).toEqual([]);
    expect(await inventory(dataDir)).toMatchObject({ sessions: [], runtime: [], secrets: [] });
    await c.close();
    c = undefined;
  });

  it.each([['agentctl_started'], ['agentctl_connected'], ['ready']])(
    'after a crash at %s during a resume the session is ready or stopped again, with its workspace',
    async (checkpoint) => {
      const dataDir = join(work, `data-resume-${checkpoint}`);
      dataDirs.push(dataDir);
      const repo = makeRepo(work, `repo-resume-${checkpoint}`, 'marker');
      c = await startController(dataDir, agentctl);
      const s = await c.launch({ repository: { path: repo }, env: { BERTH_DEMO_STEP_MS: '0' } });
      const ready = await c.waitUntilSettled(s.id);
      expect(ready.state).toBe('ready');
      await c.stop(s.id);
      await c.close();
      c = undefined;

      const child = crashChild({ CHILD_DATA_DIR: dataDir, CHILD_AGENTCTL: agentctl, CHILD_SESSION: s.id }, checkpoint);
      expect(child.status, `the child must die at ${checkpoint} (stderr: ${child.stderr.slice(-500)})`).toBe(137);

      c = await startController(dataDir, agentctl);
      const view = await c.get(s.id);
      expect(existsSync(ready.workspacePath!), 'a resume never loses the workspace').toBe(true);
      const after = await inventory(dataDir);
      expect(after.runtime).toHaveLength(1);
      if (checkpoint === 'ready') {
        expect(view.state).toBe('ready');
        expect(agentctlPids(dataDir)).toHaveLength(1);
      } else {
        expect(view.state).toBe('failed');
        expect(after.runtime[0]?.state).toBe('stopped');
        expect(agentctlPids(dataDir)).toEqual([]);
        expect((await c.resume(s.id)).state).toBe('ready');
      }
      await waitForOutput(c, s.id, /ready for instructions/);
      expect(processesWithCwd(ready.workspacePath!)).toHaveLength(1);
      await c.remove(s.id);
      await c.close();
      c = undefined;
    },
  );
});
