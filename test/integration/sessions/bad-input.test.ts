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
    c = await startController(dataDir, agentctl, {
      ghost: { command: ['berth-no-such-command-xyz', '--flag'] },
      noexec: { command: ['./README.md'] }, // in the checkout, not executable
    });
  });

  afterAll(() => teardownController(c, dataDir, work));

  async function assertNothingLeft(sessionId: string): Promise<void> {
    expect(agentctlPids(dataDir), 'no agentctl is left running').toEqual([]);
    expect(existsSync(join(dataDir, 'workspaces', sessionId)), 'the workspace is removed').toBe(false);
    const store = InventoryStore.open({ dataDir });
    try {
      expect(await store.getRuntime(sessionId), 'the provisional row is released').toBeNull();
      expect(await store.listSecretIds()).toEqual([]);
    } finally {
      await store.close();
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

  // Cheap repository checks run before the session exists (issue 7, item 7): no failed row is left.
  it.each([
    ['a repository path that does not exist', () => ({ path: join(work, 'missing-repo') }), 'repository.path', /missing-repo: no such directory$/],
    ['a directory that is not a git repository', () => ({ path: work }), 'repository.path', /is not a git repository git can clone \(fatal: /],
    ['a clone URL that does not exist', () => ({ url: `file://${join(work, 'nowhere.git')}` }), 'repository.url', /nowhere\.git cannot be read \(fatal: /],
    ['a branch that does not exist', () => ({ path: repo, branch: 'no-such-branch' }), 'repository.branch', /^repository\.branch: no branch or tag 'no-such-branch' in /],
  ])('refuses %s at %s before creating anything', async (_what, repository, field, message) => {
    const before = (await c.list()).length;
    const err = await c.launch({ repository: repository(), env: FAST_AGENT_ENV }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(LaunchValidationError);
    expect((err as LaunchValidationError).field).toBe(field);
    expect((err as Error).message).toMatch(message);
    expect((await c.list()).length, 'no session row').toBe(before);
    expect(agentctlPids(dataDir)).toEqual([]);
  });

  it('refuses a session name that is taken, or has control characters, before creating anything', async () => {
    const first = await c.launch({ repository: { path: repo }, name: 'taken-name', env: FAST_AGENT_ENV });
    try {
      const before = (await c.list()).length;
      for (const [name, detail] of [['taken-name', `'taken-name' is taken by session ${first.id}`], ['bad\u001b[2Jname', 'must be 1-63 characters']] as const) {
        const err = await c.launch({ repository: { path: repo }, name }).then(() => null, (e: unknown) => e);
        expect(err).toBeInstanceOf(LaunchValidationError);
        expect((err as LaunchValidationError).field).toBe('name');
        expect((err as Error).message).toContain(detail);
      }
      expect((await c.list()).length).toBe(before);
    } finally {
      await c.waitUntilSettled(first.id);
      await c.remove(first.id, { force: true });
    }
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
    await assertNothingLeft(s.id);
  });

  it('fails the agent_start stage for an agent command that is not executable, saying why', async () => {
    const s = await c.launch({ repository: { path: repo }, agent: 'noexec' });
    const v = await c.waitUntilSettled(s.id);
    expect(v.state).toBe('failed');
    expect(v.error).toMatchObject({ stage: 'agent_start', message: "agent 'noexec': cannot start './README.md': permission denied (EACCES)" });
    await assertNothingLeft(s.id);
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

  it('says how to launch on a kubernetes executor named directly (through one of its profiles), before creating anything', async () => {
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
        "executor: 'k8s' is a kubernetes executor (a cluster connection) and has no Pod template: add a profile with \"executor: k8s\" and a \"kubernetes:\" block, then name that profile",
      );
      expect(await k.list(), 'no session row').toEqual([]);
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

  it('exec of a command that cannot start ends as in a shell (127 not found, 126 not executable) and leaves the session ready', async () => {
    const s = await c.launch({ repository: { path: repo }, env: FAST_AGENT_ENV });
    expect((await c.waitUntilSettled(s.id)).state).toBe('ready');
    for (const [argv0, exitCode, line] of [
      ['berth-no-such-command-xyz', 127, 'berth: exec: berth-no-such-command-xyz: command not found\n'],
      ['./README.md', 126, 'berth: exec: ./README.md: permission denied\n'],
    ] as const) {
      let stderr = '';
      const res = await c.exec(s.id, [argv0], { onOutput: (ch) => (stderr += ch.stream === 'stderr' ? Buffer.from(ch.data).toString() : '') });
      expect(res).toEqual({ exitCode, signal: null });
      expect(stderr).toBe(line);
    }
    expect((await c.get(s.id)).state).toBe('ready');
    await c.remove(s.id);
  });
});
