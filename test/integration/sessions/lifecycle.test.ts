import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller, SessionEvent } from '../../../src/controller/index.js';
import { SessionNotFoundError, SessionStateError } from '../../../src/controller/index.js';
import { decodeLocalMetadata } from '../../../src/executors/local/metadata.js';
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
  waitForOutput,
} from './helpers.js';

describe('Sessions on the local executor: launch → output → exec → files → stop → resume → rm', () => {
  let work: string;
  let dataDir: string;
  let agentctl: string;
  let repo: string;
  let c: Controller;

  beforeAll(async () => {
    work = tempDir('lifecycle');
    dataDir = join(work, 'data');
    agentctl = agentctlBundle(work);
    repo = makeRepo(work, 'repo', 'marker-lifecycle');
    c = await startController(dataDir, agentctl);
  });

  afterAll(() => teardownController(c, dataDir, work, 'no agentctl or agent process may outlive its session'));

  it('runs the whole main job through the SessionService', async () => {
    const events: SessionEvent[] = [];
    const unsubscribe = c.subscribe((e) => events.push(e));
    const launched = await c.launch({ repository: { path: repo }, prompt: 'write notes', env: FAST_AGENT_ENV, name: 'first' });
    expect(launched.state).toBe('launching');
    expect(launched.name).toBe('first');

    const ready = await c.waitUntilSettled(launched.id);
    expect(ready.error).toBeNull();
    expect(ready.state).toBe('ready');
    expect(ready.stages.map((s) => [s.name, s.status])).toEqual([
      ['workspace', 'succeeded'],
      ['agentctl_start', 'succeeded'],
      ['agentctl_connect', 'succeeded'],
      ['agent_start', 'succeeded'],
    ]);
    expect(ready.workspacePath).toBe(join(dataDir, 'workspaces', launched.id, 'repo'));
    expect(ready.agentProcess).toMatchObject({ id: 'agent-1', status: 'running' });

    // every stage change was an event, in order, and a late subscriber sees the current launch
    const stageEvents = events.filter((e): e is Extract<SessionEvent, { type: 'stage' }> => e.type === 'stage' && e.sessionId === launched.id);
    expect(stageEvents.map((e) => `${e.stage.name}:${e.stage.status}`)).toEqual([
      'workspace:running',
      'workspace:succeeded',
      'agentctl_start:running',
      'agentctl_start:succeeded',
      'agentctl_connect:running',
      'agentctl_connect:succeeded',
      'agent_start:running',
      'agent_start:succeeded',
    ]);
    unsubscribe();
    const late: SessionEvent[] = [];
    c.subscribe((e) => late.push(e), { sessionId: launched.id })();
    expect(late.filter((e) => e.type === 'stage')).toHaveLength(8);

    // agent output
    const out = await waitForOutput(c, launched.id, /ready for instructions/);
    expect(out).toContain('agent> task: write notes');
    expect(out).toContain('agent> marker: marker-lifecycle');
    expect(out).toContain('created NOTES.md');

    // get in: stdin to the agent
    await c.sendInput(launched.id, 'hello agent\n');
    await waitForOutput(c, launched.id, /you said: hello agent/);

    // exec
    const status = await execText(c, launched.id, ['git', 'status', '--short']);
    expect(status).toEqual({ exitCode: 0, stdout: '?? NOTES.md\n' });
    expect(await execText(c, launched.id, ['cat'], 'piped stdin')).toEqual({ exitCode: 0, stdout: 'piped stdin' });
    expect((await execText(c, launched.id, ['sh', '-c', 'exit 3'])).exitCode).toBe(3);

    // files
    const ws = await c.workspace(launched.id);
    await ws.files.writeFile('src/new.txt', 'from the test\n');
    expect(await ws.files.readTextFile('src/new.txt')).toBe('from the test\n');
    expect(await ws.files.readTextFile('NOTES.md')).toContain('Task: write notes');
    expect((await ws.git.status()).files.map((f) => f.path).sort()).toEqual(['NOTES.md', 'src/new.txt']);
    expect((await execText(c, launched.id, ['cat', 'src/new.txt'])).stdout).toBe('from the test\n');

    // stop: agentctl and agent are gone, the workspace stays
    const agentctlBefore = agentctlPids(dataDir);
    expect(agentctlBefore).toHaveLength(1);
    const stopped = await c.stop(launched.id);
    expect(stopped.state).toBe('stopped');
    expect(agentctlPids(dataDir)).toEqual([]);
    expect(processesWithCwd(ready.workspacePath!)).toEqual([]);
    expect(existsSync(join(ready.workspacePath!, 'NOTES.md'))).toBe(true);
    await expect(c.exec(launched.id, ['true'])).rejects.toBeInstanceOf(SessionStateError);
    expect((await c.stop(launched.id)).state, 'stop is idempotent').toBe('stopped');

    // resume: agentctl restarted with a fresh nonce; the agent starts again in the same workspace
    const resumed = await c.resume(launched.id);
    expect(resumed.error).toBeNull();
    expect(resumed.state).toBe('ready');
    expect(resumed.agentProcess?.id).toBe('agent-2');
    const again = await waitForOutput(c, launched.id, /ready for instructions/);
    expect(again).toContain('updated NOTES.md');
    expect((await execText(c, launched.id, ['cat', 'src/new.txt'])).stdout, 'the workspace survived the stop').toBe('from the test\n');
    expect(agentctlPids(dataDir)).toHaveLength(1);
    expect(processesWithCwd(ready.workspacePath!)).toHaveLength(1);

    // rm: everything is gone
    await c.remove(launched.id);
    await expect(c.get(launched.id)).rejects.toBeInstanceOf(SessionNotFoundError);
    expect(existsSync(join(dataDir, 'workspaces', launched.id))).toBe(false);
    expect(agentctlPids(dataDir)).toEqual([]);
    expect(await c.list()).toEqual([]);
    await c.close();
    const store = InventoryStore.open({ dataDir });
    try {
      expect(await store.listRuntime()).toEqual([]);
      expect(await store.listSecretIds(), 'the agentctl token and nonce are deleted with the session').toEqual([]);
    } finally {
      await store.close();
    }
    c = await startController(dataDir, agentctl);
  });

  it('never stores the agentctl token or nonce in plain text', async () => {
    const v = await c.launch({ repository: { path: repo }, env: FAST_AGENT_ENV });
    expect((await c.waitUntilSettled(v.id)).state).toBe('ready');
    const store = InventoryStore.open({ dataDir });
    try {
      const row = (await store.getRuntime(v.id))!;
      expect(row.state).toBe('ready');
      const token = await store.revealSecret(row.secretRefs.AGENTCTL_AUTH_TOKEN!);
      const nonce = await store.revealSecret(row.secretRefs.AGENTCTL_BOOTSTRAP_NONCE!);
      expect(nonce).toMatch(/^[0-9a-f]{64}$/);
      for (const f of ['berth.db', 'berth.db-wal']) {
        const path = join(dataDir, 'state', f);
        if (!existsSync(path)) continue;
        const raw = readFileSync(path).toString('latin1');
        expect(raw).not.toContain(token);
        expect(raw).not.toContain(nonce);
      }
      expect(JSON.stringify(row.metadata)).not.toContain(token);
      // nor where an agent could read it: agentctl's environment, or the nonce file it was given
      const meta = decodeLocalMetadata(row.metadata);
      expect(meta.agentctlPid).not.toBeNull();
      const environ = readFileSync(`/proc/${meta.agentctlPid}/environ`, 'latin1');
      expect(environ).toContain('AGENTCTL_BOOTSTRAP_NONCE_FILE=');
      expect(environ).not.toContain(nonce);
      expect(existsSync(join(meta.sessionDir, 'agentctl-state', '.bootstrap-nonce')), 'agentctl removed its nonce file').toBe(false);
    } finally {
      await store.close();
    }
    await waitForOutput(c, v.id, /ready for instructions/);
    expect(await outputSoFar(c, v.id)).toContain('agent> starting');
    await c.remove(v.id);
  });
});
