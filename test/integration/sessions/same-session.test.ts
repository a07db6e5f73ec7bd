/**
 * Operations racing on one session: they serialize under the session's lock, and the end state is
 * consistent (nothing left running, nothing duplicated).
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../../src/controller/index.js';
import { InventoryStore } from '../../../src/inventory/index.js';
import { agentctlBundle, agentctlPids, FAST_AGENT_ENV, makeRepo, processesWithCwd, startController, teardownController, tempDir, waitForOutput } from './helpers.js';

describe('Operations racing on the same session', () => {
  let work: string;
  let dataDir: string;
  let c: Controller;

  beforeAll(async () => {
    work = tempDir('same-session');
    dataDir = join(work, 'data');
    c = await startController(dataDir, agentctlBundle(work));
  });

  afterAll(() => teardownController(c, dataDir, work));

  it('rm while launching waits for the launch, then removes everything it created', async () => {
    const s = await c.launch({ repository: { path: makeRepo(work, 'rm', 'marker-rm') }, env: FAST_AGENT_ENV });
    expect(s.state).toBe('launching');
    await c.remove(s.id);
    expect(await c.list()).toEqual([]);
    expect(agentctlPids(dataDir)).toEqual([]);
    expect(existsSync(join(dataDir, 'workspaces', s.id))).toBe(false);
    const store = InventoryStore.open({ dataDir });
    try {
      expect(await store.listRuntime()).toEqual([]);
      expect(await store.listSecretIds()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('rm while a slow clone runs cancels the launch instead of waiting for it', async () => {
    // a git server that accepts the clone and never answers: the workspace stage hangs
    const hung: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}/repo.git`;
      const s = await c.launch({ repository: { url }, env: FAST_AGENT_ENV });
      await new Promise((r) => setTimeout(r, 300)); // the clone is under way
      expect((await c.get(s.id)).state).toBe('launching');
      const removed = c.remove(s.id).then(() => 'removed');
      const outcome = await Promise.race([removed, new Promise((r) => setTimeout(() => r('still waiting'), 10_000))]);
      expect(outcome).toBe('removed');
      expect(await c.list()).toEqual([]);
      expect(existsSync(join(dataDir, 'workspaces', s.id))).toBe(false);
    } finally {
      hung.closeAllConnections();
      await new Promise((resolve) => hung.close(resolve));
    }
  });

  it('stop while launching ends stopped; two concurrent resumes start one agentctl and one agent', async () => {
    const s = await c.launch({ repository: { path: makeRepo(work, 'stop', 'marker-stop') }, env: FAST_AGENT_ENV });
    const stopped = await c.stop(s.id);
    expect(stopped.state).toBe('stopped');
    expect(agentctlPids(dataDir)).toEqual([]);
    const [a, b] = await Promise.all([c.resume(s.id), c.resume(s.id)]);
    expect(a.state).toBe('ready');
    expect(b.state).toBe('ready');
    expect(agentctlPids(dataDir)).toHaveLength(1);
    await waitForOutput(c, s.id, /ready for instructions/);
    expect(processesWithCwd(a.workspacePath!)).toHaveLength(1);
    await c.remove(s.id);
    expect(agentctlPids(dataDir)).toEqual([]);
  });
});
