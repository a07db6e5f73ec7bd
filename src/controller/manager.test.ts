import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/index.js';
import type { ExecutorCapabilities } from '../executors/executor.js';
import { secretIds } from './context.js';
import { SessionManager } from './manager.js';
import { repoCredentialId } from './repo-credentials.js';
import { LaunchValidationError, SessionStateError, type LaunchRequest } from './service.js';
import { FAKE_CAPABILITIES, FAKE_CREATED_KEY, FakeExecutor, type FakeScript } from './testing/fake-executor.js';
import { testContext, type TestContext } from './testing/test-context.js';

// A URL the repository check leaves alone (https is never probed before launch): no git, no I/O.
const REPO = { url: 'https://git.example/team/app.git' };

const config = resolveConfig(
  {
    executors: { fake: { type: 'local', secret_env: ['FAKE_KEY'] } },
    agents: { worker: { command: ['agent', '--task', '{{prompt}}'], env: { AGENT_MODE: 'test' } } },
    defaults: { executor: 'fake', agent: 'worker' },
  },
  { source: null, installRoot: '/opt/berth' },
);

let t: (TestContext & { manager: SessionManager; executor: FakeExecutor }) | null = null;
afterEach(async () => {
  await t?.manager.close();
  t?.dispose();
  t = null;
});

function setup(opts: { script?: Partial<FakeScript>; capabilities?: ExecutorCapabilities; secrets?: Record<string, string> } = {}) {
  const executor = new FakeExecutor({ ...(opts.script ? { script: opts.script } : {}), ...(opts.capabilities ? { capabilities: opts.capabilities } : {}) });
  const c = testContext({
    executors: [executor],
    config,
    secrets: opts.secrets ?? {},
    snapshotProfile: (name) => ({ executor: 'fake', profile: name === 'fake' ? null : name, type: 'local', settings: {}, env: { PROFILE_VAR: '1' } }),
  });
  t = { ...c, manager: new SessionManager(c.ctx), executor };
  return t;
}

async function refusal(p: Promise<unknown>): Promise<LaunchValidationError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LaunchValidationError);
  return err as LaunchValidationError;
}

async function launched(c: NonNullable<typeof t>, req: LaunchRequest = { repository: REPO, prompt: 'fix it' }) {
  const view = await c.manager.launch(req);
  return c.manager.waitUntilSettled(view.id);
}

describe('SessionManager.launch: one check of the request, then the launch', () => {
  it('reports every problem of a request with its field, the first one in the error, and creates nothing', async () => {
    const c = setup();
    const err = await refusal(c.manager.launch({ executor: 'nope', agent: 'ghost', env: { 'BAD-NAME': '1' }, secretEnv: ['NOT_APPROVED'], prompt: 'a\0b' }));
    expect(err.field).toBe('executor');
    expect(err.message).toBe("executor: unknown executor or profile 'nope' (configured: local, fake)");
    expect(err.problems.map((p) => p.field)).toEqual(['executor', 'agent', 'env.BAD-NAME', 'secretEnv.NOT_APPROVED', 'prompt']);
    expect(err.problems[1]?.message).toBe("unknown agent 'ghost' (configured: demo, demo-acp, claude, codex, gemini, opencode, worker)");
    expect(await c.store.listSessions()).toEqual([]);
    expect(c.executor.calls).toEqual([]);
  });

  it('refuses an executor entry no executor of this controller runs', async () => {
    const c = setup();
    const err = await refusal(c.manager.launch({ repository: REPO, executor: 'local' }));
    expect(err.message).toBe("executor: executor 'local' (type local) is not available in this build of berth");
  });

  it('requires a repository unless the executor declares it optional', async () => {
    const c = setup();
    expect((await refusal(c.manager.launch({}))).message).toBe('repository: is required (url or path)');
    await c.manager.close();
    c.dispose();
    const optional = setup({ capabilities: { ...FAKE_CAPABILITIES, repositoryOptional: true } });
    const v = await launched(optional, {});
    expect(v.state).toBe('ready');
    expect(optional.executor.callsOf('createInstance')[0]?.req.repository).toEqual({});
  });

  it('checks secret names against the approved ones and their presence in the controller environment', async () => {
    const unset = setup();
    expect((await refusal(unset.manager.launch({ repository: REPO, secretEnv: ['FAKE_KEY'] }))).message).toBe('secretEnv.FAKE_KEY: is not set in the controller environment');
    await unset.manager.close();
    unset.dispose();
    const c = setup({ secrets: { FAKE_KEY: 'v' } });
    expect((await launched(c, { repository: REPO, secretEnv: ['FAKE_KEY'] })).state).toBe('ready');
    expect(c.executor.callsOf('createInstance')[0]?.req.secretEnv).toEqual({ FAKE_KEY: 'v' });
  });

  it('refuses a name another session has', async () => {
    const c = setup();
    const first = await launched(c, { repository: REPO, name: 'mine' });
    const err = await refusal(c.manager.launch({ repository: REPO, name: 'mine' }));
    expect(err.message).toBe(`name: 'mine' is taken by session ${first.id}; session names are unique`);
  });

  it('records the request as checked (agent argv, env, profile), launches it in the background and starts the agent', async () => {
    const c = setup();
    const view = await c.manager.launch({ repository: REPO, prompt: 'fix it', env: { FOO: 'bar' } });
    expect(view.state).toBe('launching');
    const session = await c.store.getSession(view.id);
    expect(session?.request).toMatchObject({
      env: { FOO: 'bar' },
      prompt: 'fix it',
      agentCommand: ['agent', '--task', 'fix it'],
      agentEnv: { AGENT_MODE: 'test' },
      profileEnv: { PROFILE_VAR: '1' },
      profile: { executor: 'fake' },
    });
    const ready = await c.manager.waitUntilSettled(view.id);
    expect(ready.state).toBe('ready');
    expect(c.executor.ops().filter((op) => op === 'createInstance' || op === 'startProcess')).toEqual(['createInstance', 'startProcess']);
    expect(c.executor.callsOf('startProcess')[0]).toMatchObject({ id: 'agent-1', kind: 'agent' });
    expect(await c.store.getRuntime(view.id)).toMatchObject({ state: 'ready', executor: 'fake' });
    expect(c.checkpoints.slice(0, 1)).toEqual(['session_created']);
  });

  it('splits a credential off the repository URL: stored encrypted, handed to the clone, never in the session row', async () => {
    const c = setup();
    const v = await launched(c, { repository: { url: 'https://user:s3cret@git.example/app.git' } });
    expect(v.repository).toEqual({ url: 'https://git.example/app.git', credentials: true });
    expect(JSON.stringify(await c.store.getSession(v.id))).not.toContain('s3cret');
    expect(await c.store.listSecretIds()).toContain(repoCredentialId(v.id));
    expect(c.executor.callsOf('createInstance')[0]?.req.repositoryCredentials).toEqual({ username: 'user', password: 's3cret' });
  });

  it('refuses a launch once closed', async () => {
    const c = setup();
    await c.manager.close();
    await expect(c.manager.launch({ repository: REPO })).rejects.toThrow('controller is closed');
    expect(c.executor.ops()).toEqual(['close']);
  });
});

describe('SessionManager.stop and resume', () => {
  it('stops the recorded instance (keeping it), records it stopped, and a resume revives it with the recorded secrets', async () => {
    const c = setup();
    const v = await launched(c);
    const row = (await c.store.getRuntime(v.id))!;
    expect((await c.manager.stop(v.id)).state).toBe('stopped');
    const [stop] = c.executor.callsOf('stopInstance');
    expect(stop?.opts).toMatchObject({ destroy: false, reason: 'user_stop' });
    expect(stop?.target).toMatchObject({ identity: { sessionId: v.id, instanceId: row.instanceId }, metadata: row.metadata, profile: { executor: 'fake' } });
    expect(stop?.target.control, 'stopped through the live connection').toBeDefined();
    expect((await c.store.getRuntime(v.id))?.state).toBe('stopped');

    c.executor.script.revived = true;
    expect((await c.manager.resume(v.id)).state).toBe('ready');
    const revive = c.executor.callsOf('createInstance')[1]?.req;
    expect(revive?.previous).toEqual({ metadata: expect.objectContaining({ [FAKE_CREATED_KEY]: 'workspace,agentctl_start,agentctl_connect' }), secrets: { authToken: 'token-1', bootstrapNonce: 'nonce-1' } });
    expect(revive?.identity.instanceId, 'the same instance').toBe(row.instanceId);
  });

  it('resumes a session recorded before profile snapshots with its executor entry as configured, without settings', async () => {
    const c = setup();
    const base = { env: {}, secretEnv: [], prompt: null, agentCommand: ['agent'], agentEnv: {}, profileEnv: { OLD: '1' } };
    await c.store.insertSession({ id: 's-legacy0001', name: null, executor: 'fake', agent: 'worker', repository: REPO, request: base, state: 'stopped', error: null, stages: [], workspacePath: null });
    expect((await c.manager.resume('s-legacy0001')).state).toBe('ready');
    expect(c.executor.callsOf('createInstance')[0]?.req.profile).toEqual({ executor: 'fake', profile: null, type: 'local', settings: {}, env: { OLD: '1' } });
  });

  it('marks a session failed when its stop fails, and rethrows', async () => {
    const c = setup();
    const v = await launched(c);
    c.executor.script.stopError = new Error('cannot reach the host');
    await expect(c.manager.stop(v.id)).rejects.toThrow('cannot reach the host');
    expect((await c.manager.get(v.id)).error?.message).toBe('stop failed: cannot reach the host');
  });

  it('refuses to resume a session whose agent still runs', async () => {
    const c = setup();
    const v = await launched(c);
    const err = await c.manager.resume(v.id).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SessionStateError);
    expect((err as Error).message).toBe(`session '${v.id}' is already ready (agent running); nothing to resume`);
  });
});

describe('SessionManager.remove', () => {
  it('destroys the instance, deletes its secrets and the session, and says so', async () => {
    const c = setup();
    const v = await launched(c, { repository: { url: 'https://user:tok@git.example/app.git' } });
    const ids = secretIds((await c.store.getRuntime(v.id))!.instanceId);
    await c.manager.remove(v.id);
    expect(c.executor.callsOf('stopInstance')[0]?.opts).toMatchObject({ destroy: true, reason: 'session_removed' });
    expect(await c.store.getSession(v.id)).toBeNull();
    expect(await c.store.listSecretIds()).not.toEqual(expect.arrayContaining([ids.authToken]));
    expect(await c.store.listSecretIds()).toEqual([]);
    expect(c.events.filter((e) => e.sessionId === v.id).map((e) => e.type)).toContain('removed');
  });

  it('keeps a session whose cleanup failed unless forced, then forgets it with a diagnostic', async () => {
    const c = setup();
    const v = await launched(c);
    c.executor.script.stopError = new Error('volume busy');
    await expect(c.manager.remove(v.id)).rejects.toThrow('volume busy');
    expect((await c.manager.get(v.id)).error?.message).toBe('remove failed: volume busy (retry, or remove with force)');
    await c.manager.remove(v.id, { force: true });
    expect(await c.store.getSession(v.id)).toBeNull();
    expect(c.events.some((e) => e.type === 'diagnostic' && e.reason === 'CleanupFailed' && e.message === 'volume busy')).toBe(true);
  });

  it('asks the executor to remove what a launch left unrecorded when there is no runtime row', async () => {
    const c = setup({ script: { failAt: 'workspace' } });
    const removed: string[] = [];
    Object.assign(c.executor, { removeUnrecorded: async (id: string) => void removed.push(id) });
    const v = await launched(c);
    expect(v.state).toBe('failed');
    expect(await c.store.getRuntime(v.id)).toBeNull();
    await c.manager.remove(v.id);
    expect(removed).toEqual([v.id]);
    expect(c.executor.callsOf('stopInstance')).toEqual([]);
  });
});

describe('SessionManager.recover', () => {
  it('finishes a removal a restart interrupted: the instance destroyed, its secrets and the session gone', async () => {
    const c = setup();
    const v = await launched(c, { repository: { url: 'https://user:tok@git.example/app.git' } });
    const row = (await c.store.getRuntime(v.id))!;
    await c.store.updateSession(v.id, { state: 'removing' }); // what a controller killed mid-rm left
    await c.manager.recover(); // as the restarted (or newly elected) controller does
    expect(c.executor.callsOf('stopInstance').at(-1)).toMatchObject({ target: { identity: { instanceId: row.instanceId } }, opts: { destroy: true, reason: 'session_removed' } });
    expect(await c.store.getSession(v.id)).toBeNull();
    expect(await c.store.listSecretIds()).toEqual([]);
    expect(c.events).toContainEqual(expect.objectContaining({ type: 'removed', sessionId: v.id }));
  });

  it('leaves a removal it cannot finish failed, saying why (a second rm retries)', async () => {
    const c = setup();
    const v = await launched(c);
    await c.store.updateSession(v.id, { state: 'removing' });
    c.executor.script.stopError = new Error('the API server is gone');
    await c.manager.recover();
    expect(await c.store.getSession(v.id)).toMatchObject({ state: 'failed', error: { message: 'remove failed: the API server is gone (retry, or remove with force)' } });
  });

  it('deletes secrets nothing references any more and keeps those of live rows', async () => {
    const c = setup();
    const v = await launched(c, { repository: { url: 'https://user:tok@git.example/app.git' } });
    const kept = [...(await c.store.listSecretIds())].sort();
    await c.store.putSecret('agentctl-auth-s-gone-abc', 'x');
    await c.store.putSecret(repoCredentialId('s-0000000000'), 'y');
    await c.manager.recover();
    expect([...(await c.store.listSecretIds())].sort()).toEqual(kept);
    expect(kept).toContain(repoCredentialId(v.id));
  });
});
