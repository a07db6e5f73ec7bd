import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigFieldError, ConfigFileError } from '../../../src/config/index.js';
import type { Controller } from '../../../src/controller/index.js';
import { createController, LaunchValidationError, SessionNotFoundError } from '../../../src/controller/index.js';
import { InventoryOpenError, InventoryStore } from '../../../src/inventory/index.js';
import {
  agentctlBundle,
  agentctlPids,
  FAST_AGENT_ENV,
  makeRepo,
  startController,
  teardownController,
  tempDir,
} from './helpers.js';

describe('Bad input and faults', () => {
  let work: string;
  let dataDir: string;
  let agentctl: string;
  let repo: string;
  let c: Controller;

  beforeAll(async () => {
    work = tempDir('bad');
    dataDir = join(work, 'data');
    agentctl = agentctlBundle(work);
    repo = makeRepo(work, 'repo', 'marker');
    c = await startController(dataDir, agentctl, { ghost: { command: ['berth-no-such-command-xyz', '--flag'] } });
  });

  afterAll(() => teardownController(c, dataDir, work));

  function assertNothingLeft(sessionId: string): void {
    expect(agentctlPids(dataDir), 'no agentctl is left running').toEqual([]);
    expect(existsSync(join(dataDir, 'workspaces', sessionId)), 'the workspace is removed').toBe(false);
    const store = InventoryStore.open({ dataDir });
    try {
      expect(store.getRuntime(sessionId), 'the provisional row is released').toBeNull();
      expect(store.listSecretIds()).toEqual([]);
    } finally {
      store.close();
    }
  }

  it.each([
    ['get', (c: Controller) => c.get('s-nope')],
    ['stop', (c: Controller) => c.stop('s-nope')],
    ['resume', (c: Controller) => c.resume('s-nope')],
    ['remove', (c: Controller) => c.remove('s-nope')],
    ['exec', (c: Controller) => c.exec('s-nope', ['true'])],
    ['sendInput', (c: Controller) => c.sendInput('s-nope', 'x')],
    ['logs', async (c: Controller) => {
      for await (const _ of c.logs('s-nope', {})) void _;
    }],
  ])('%s of an unknown session id throws SessionNotFoundError', async (_op, call) => {
    const err = await (call(c) as Promise<unknown>).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(SessionNotFoundError);
    expect((err as SessionNotFoundError).sessionId).toBe('s-nope');
    expect((err as Error).message).toBe("session not found: 's-nope' (list sessions with: berth ls)");
  });

  it('fails the workspace stage for a repository path that does not exist, naming repository.path', async () => {
    const s = await c.launch({ repository: { path: join(work, 'missing-repo') }, env: FAST_AGENT_ENV });
    const v = await c.waitUntilSettled(s.id);
    expect(v.state).toBe('failed');
    expect(v.error).toEqual({ stage: 'workspace', message: `repository.path: ${join(work, 'missing-repo')} does not exist` });
    expect(v.stages).toMatchObject([{ name: 'workspace', status: 'failed', reason: 'RepositoryNotFound' }]);
    assertNothingLeft(s.id);
  });

  it('fails the workspace stage for a clone URL that does not exist, naming repository.url', async () => {
    const s = await c.launch({ repository: { url: `file://${join(work, 'nowhere.git')}` }, env: FAST_AGENT_ENV });
    const v = await c.waitUntilSettled(s.id);
    expect(v.state).toBe('failed');
    expect(v.error?.stage).toBe('workspace');
    expect(v.error?.message).toMatch(/^repository\.url: /);
    assertNothingLeft(s.id);
  });

  it('fails the workspace stage for a branch that does not exist, naming repository.branch', async () => {
    const s = await c.launch({ repository: { path: repo, branch: 'no-such-branch' }, env: FAST_AGENT_ENV });
    const v = await c.waitUntilSettled(s.id);
    expect(v.error).toEqual({ stage: 'workspace', message: expect.stringMatching(/^repository\.branch: no-such-branch does not exist/) });
    assertNothingLeft(s.id);
  });

  it('fails the agent_start stage for a missing agent command, naming the agent and argv[0], and rolls everything back', async () => {
    const s = await c.launch({ repository: { path: repo }, agent: 'ghost' });
    const v = await c.waitUntilSettled(s.id);
    expect(v.state).toBe('failed');
    expect(v.error?.stage).toBe('agent_start');
    expect(v.error?.message).toBe(
      "agent 'ghost': command 'berth-no-such-command-xyz' was not found (check agents.ghost.command in berth.yaml and PATH)",
    );
    expect(v.stages.map((st) => `${st.name}:${st.status}`)).toEqual([
      'workspace:succeeded',
      'agentctl_start:succeeded',
      'agentctl_connect:succeeded',
      'agent_start:failed',
    ]);
    assertNothingLeft(s.id);
  });

  it.each([
    [{ repository: {} }, 'repository'],
    [{ repository: { url: 'x', path: 'y' } }, 'repository'],
    [{ repository: { path: '/r' }, agent: 'nope' }, 'agent'],
    [{ repository: { path: '/r' }, executor: 'nope' }, 'executor'],
    [{ repository: { path: '/r' }, env: { 'BAD-NAME': '1' } }, 'env.BAD-NAME'],
    [{ repository: { path: '/r' }, secretEnv: ['BERTH_TEST_UNSET_SECRET'] }, 'secretEnv.BERTH_TEST_UNSET_SECRET'],
  ])('rejects launch request %j at field %s before creating anything', async (req, field) => {
    const before = (await c.list()).length;
    const err = await c.launch(req).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(LaunchValidationError);
    expect((err as LaunchValidationError).field).toBe(field);
    expect((await c.list()).length).toBe(before);
  });

  it('says clearly that the kubernetes executor is not implemented yet', async () => {
    const k = await createController({
      dataDir: join(work, 'data-k8s'),
      agentctlPath: agentctl,
      env: {},
      config: (await import('../../../src/config/index.js')).resolveConfig(
        { executors: { k8s: { type: 'kubernetes', namespace: 'agents' } } },
        { source: null, installRoot: '/opt/berth' },
      ),
    });
    try {
      await expect(k.launch({ repository: { path: repo }, executor: 'k8s' })).rejects.toThrow(
        "executor: executor 'k8s' is of type kubernetes, which is not implemented yet; use a local executor",
      );
    } finally {
      await k.close();
    }
  });

  it('refuses a data dir it cannot write, with a clear error', async () => {
    const file = join(work, 'not-a-dir');
    writeFileSync(file, 'x');
    const err = await createController({ dataDir: join(file, 'data'), agentctlPath: agentctl, env: {} }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(InventoryOpenError);
    expect((err as Error).message).toMatch(/^inventory: cannot open .*not-a-dir\/data: .*choose a writable --data-dir/);
    if (process.getuid?.() !== 0) {
      const ro = join(work, 'read-only');
      mkdirSync(ro, { mode: 0o500 });
      await expect(createController({ dataDir: ro, agentctlPath: agentctl, env: {} })).rejects.toThrow(/the data dir is not writable/);
    }
  });

  it('reports a malformed berth.yaml with its field path or position', async () => {
    const badField = join(work, 'data-bad-field');
    mkdirSync(badField);
    writeFileSync(join(badField, 'berth.yaml'), 'agents:\n  claude:\n    command: []\n');
    const e1 = await createController({ dataDir: badField, env: {} }).then(() => null, (e: unknown) => e);
    expect(e1).toBeInstanceOf(ConfigFieldError);
    expect((e1 as ConfigFieldError).path).toBe('agents.claude.command');
    const badYaml = join(work, 'data-bad-yaml');
    mkdirSync(badYaml);
    writeFileSync(join(badYaml, 'berth.yaml'), 'agents: [\n  token: "sk-secret-value\n');
    const e2 = await createController({ dataDir: badYaml, env: {} }).then(() => null, (e: unknown) => e);
    expect(e2).toBeInstanceOf(ConfigFileError);
    expect((e2 as Error).message).not.toContain('sk-secret-value');
    expect(readdirSync(badYaml), 'nothing is created for a bad config').toEqual(['berth.yaml']);
  });

  it('exec of a missing command ends with 127 and a "command not found" line, as in a shell, and leaves the session ready', async () => {
    const s = await c.launch({ repository: { path: repo }, env: FAST_AGENT_ENV });
    expect((await c.waitUntilSettled(s.id)).state).toBe('ready');
    let stderr = '';
    const res = await c.exec(s.id, ['berth-no-such-command-xyz'], { onOutput: (ch) => (stderr += ch.stream === 'stderr' ? Buffer.from(ch.data).toString() : '') });
    expect(res).toEqual({ exitCode: 127, signal: null });
    expect(stderr).toBe('berth: exec: berth-no-such-command-xyz: command not found\n');
    expect((await c.get(s.id)).state).toBe('ready');
    await c.remove(s.id);
  });
});
