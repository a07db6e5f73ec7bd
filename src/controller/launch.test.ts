import { afterEach, describe, expect, it } from 'vitest';
import { INIT_STAGE, LaunchError, REASON } from '../executors/launch-kit/index.js';
import type { SessionRecord } from '../inventory/index.js';
import { secretIds, SECRET_REF } from './context.js';
import { SessionLaunch, type LaunchMode } from './launch.js';
import type { SessionEvent } from './service.js';
import { FAKE_CREATED_KEY, FakeExecutor, fakeProcess, LOCAL_LIKE_STAGES, type FakeScript } from './testing/fake-executor.js';
import { insertTestSession, testContext, type TestContext } from './testing/test-context.js';

let t: TestContext | null = null;
afterEach(() => {
  t?.dispose();
  t = null;
});

function setup(script: Partial<FakeScript> = {}, secrets: Record<string, string> = {}) {
  const executor = new FakeExecutor({ script });
  t = testContext({ executors: [executor], secrets });
  const { ctx, store } = t;
  // the row's state as each checkpoint is reached: the inventory's order, not just the hook's (the
  // hook is synchronous, so it reads the state of the last write the store had acknowledged)
  const acknowledged = new Map<string, string>();
  const overrides: Partial<typeof store> = {
    upsertRuntime: async (...args) => {
      const row = await store.upsertRuntime(...args);
      acknowledged.set(row.sessionId, row.state);
      return row;
    },
    releaseRuntime: async (...args) => {
      await store.releaseRuntime(...args);
      acknowledged.delete(args[0]);
    },
  };
  ctx.store = new Proxy(store, {
    get: (target, prop) => {
      const own = (overrides as Record<PropertyKey, unknown>)[prop];
      if (own !== undefined) return own;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const rowAt: string[] = [];
  ctx.hooks.onCheckpoint = (name, sessionId) => {
    t?.checkpoints.push(name);
    rowAt.push(`${name}:${acknowledged.get(sessionId) ?? '-'}`);
  };
  return { ...t, executor, rowAt };
}

function launch(c: TestContext, session: SessionRecord, mode: LaunchMode = { kind: 'fresh' }): SessionLaunch {
  return new SessionLaunch(c.ctx, session, mode, 'fake', new AbortController().signal);
}

/** `name:status[:reason]` of each stage event, in order. */
function stageTrail(events: SessionEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'stage' ? [`${e.stage.name}:${e.stage.status}${e.stage.reason ? `:${e.stage.reason}` : ''}`] : []));
}

function diagnostics(events: SessionEvent[]): { reason: string; message: string }[] {
  return events.flatMap((e) => (e.type === 'diagnostic' ? [{ reason: e.reason, message: e.message }] : []));
}

function states(events: SessionEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'state' ? [e.state] : []));
}

describe('SessionLaunch: a fresh launch', () => {
  it('reports every stage in order, the executor’s then the agent’s, and ends ready', async () => {
    const c = setup();
    const session = await insertTestSession(c.store);
    await launch(c, session).run();
    expect(stageTrail(c.events)).toEqual([
      'workspace:running',
      'workspace:succeeded',
      'agentctl_start:running',
      'agentctl_start:succeeded',
      'agentctl_connect:running',
      'agentctl_connect:succeeded',
      'agent_start:running',
      'agent_start:succeeded',
    ]);
    expect(states(c.events)).toEqual(['ready']);
    const view = await c.store.getSession(session.id);
    expect(view).toMatchObject({ state: 'ready', error: null, workspacePath: '/fake/workspace' });
    expect(view?.stages.map((s) => `${s.name}:${s.status}`)).toEqual(['workspace:succeeded', 'agentctl_start:succeeded', 'agentctl_connect:succeeded', 'agent_start:succeeded']);
  });

  it('writes the checkpoints in order: the executor’s, then the secrets, then the ready row, then the agent', async () => {
    const c = setup();
    const session = await insertTestSession(c.store);
    await launch(c, session).run();
    expect(c.rowAt).toEqual([
      'workspace_created:workspace_created',
      'agentctl_started:agentctl_started',
      'agentctl_connected:agentctl_connected',
      // the secrets are stored before the row that refers to them says `ready`
      'secrets_stored:agentctl_connected',
      'ready:ready',
      'agent_started:ready',
    ]);
    const row = await c.store.getRuntime(session.id);
    const ids = secretIds(row?.instanceId ?? '');
    expect(row?.metadata).toMatchObject({ [FAKE_CREATED_KEY]: 'workspace,agentctl_start,agentctl_connect', launch_kind: 'fresh', agent_process_id: 'agent-1' });
    expect(row?.secretRefs).toEqual({ [SECRET_REF.authToken]: ids.authToken, [SECRET_REF.bootstrapNonce]: ids.bootstrapNonce });
    expect(await c.store.revealSecret(ids.authToken)).toBe('token-1');
  });

  it('hands the executor the session’s identity, repository, env and secret values, and starts the agent once', async () => {
    const c = setup({}, { API_KEY: 'secret-value' });
    const session = await insertTestSession(c.store, { secretEnv: ['API_KEY'] });
    await launch(c, session).run();
    const [create] = c.executor.callsOf('createInstance');
    const instanceId = create?.req.identity.instanceId ?? '';
    expect(instanceId).toMatch(/^s-test-[0-9a-f]{6}$/);
    expect(create?.req).toMatchObject({
      identity: { instanceId, sessionId: 's-test', taskId: 's-test', environmentId: 's-test' },
      repository: { path: '/repo' },
      env: { FOO: 'bar' },
      secretEnv: { API_KEY: 'secret-value' },
    });
    expect(create?.req.previous).toBeUndefined();
    expect(c.executor.ops()).toEqual(['createInstance', 'startProcess']);
    expect(c.ctx.live.get(session.id)?.agentProcessId).toBe('agent-1');
  });
});

describe('SessionLaunch: a failed launch ends in one rollback', () => {
  it.each(LOCAL_LIKE_STAGES.map((s) => s.stage))('a failure in the executor’s %s stage: the executor’s own rollback, the row released, the session failed there', async (stage) => {
    const c = setup({ failAt: stage, failure: new Error('disk full') });
    const session = await insertTestSession(c.store);
    await launch(c, session).run();
    expect(c.executor.callsOf('rollback')).toEqual([{ op: 'rollback', errors: [], released: true }]);
    expect(c.executor.callsOf('stopInstance')).toEqual([]);
    expect(await c.store.getRuntime(session.id)).toBeNull();
    expect(await c.store.getSession(session.id)).toMatchObject({ state: 'failed', error: { stage, message: `${stage}: disk full` } });
    const trail = stageTrail(c.events);
    expect(trail.at(-1)).toBe(`${stage}:failed:Error`);
    expect(trail.filter((s) => s.endsWith(':failed:Error'))).toHaveLength(1);
    expect(c.checkpoints).not.toContain('secrets_stored');
  });

  it('a failure in the agent_start stage: the controller stops and destroys the instance once, and removes its secrets and row', async () => {
    const c = setup({ startProcessError: new Error('exec format error') });
    const session = await insertTestSession(c.store);
    await launch(c, session).run();
    const stops = c.executor.callsOf('stopInstance');
    expect(stops).toHaveLength(1);
    expect(stops[0]?.opts).toMatchObject({ destroy: true, reason: 'rollback' });
    expect(stops[0]?.opts.signal).toBeInstanceOf(AbortSignal);
    expect(c.executor.callsOf('rollback')).toEqual([]);
    expect(c.executor.ops().slice(-2)).toEqual(['stopInstance', 'instanceClose']);
    const instanceId = c.executor.callsOf('createInstance')[0]?.req.identity.instanceId ?? '';
    expect(await c.store.getRuntime(session.id)).toBeNull();
    await expect(c.store.revealSecret(secretIds(instanceId).authToken)).rejects.toThrow();
    expect(c.ctx.live.get(session.id)).toBeUndefined();
    expect(await c.store.getSession(session.id)).toMatchObject({ state: 'failed', error: { stage: 'agent_start', message: 'agent_start: exec format error' } });
    expect(stageTrail(c.events).at(-1)).toBe('agent_start:failed:Error');
  });

  it('a failure before the executor is asked (a secret serve does not have): nothing to roll back', async () => {
    const c = setup();
    const session = await insertTestSession(c.store, { secretEnv: ['MISSING'] });
    await launch(c, session).run();
    expect(c.executor.ops()).toEqual([]);
    expect(await c.store.getSession(session.id)).toMatchObject({ state: 'failed', error: { stage: INIT_STAGE, message: 'secretEnv.MISSING: is not set in the controller environment' } });
  });

  it('an executor that is not configured fails the session at initialize', async () => {
    const c = setup();
    const session = await insertTestSession(c.store);
    await new SessionLaunch(c.ctx, session, { kind: 'fresh' }, 'gone', new AbortController().signal).run();
    expect(await c.store.getSession(session.id)).toMatchObject({ state: 'failed', error: { stage: INIT_STAGE, message: "executor 'gone' is not available" } });
  });
});

describe('SessionLaunch: rollback errors ride along', () => {
  it('the executor’s rollback errors are on the session’s error, and its row is kept for the next cleanup', async () => {
    const c = setup({ failAt: 'agentctl_start', failure: new LaunchError('agentctl_start', 'AgentctlUnhealthy', 'agentctl_start: no port'), rollbackErrors: [new Error('delete pvc: forbidden')] });
    const session = await insertTestSession(c.store);
    await launch(c, session).run();
    expect(c.executor.callsOf('rollback')).toHaveLength(1);
    expect(c.executor.callsOf('rollback')[0]?.released).toBe(false);
    expect((await c.store.getRuntime(session.id))?.state).toBe('workspace_created');
    expect((await c.store.getSession(session.id))?.error).toEqual({ stage: 'agentctl_start', message: 'agentctl_start: no port (and rollback failed: delete pvc: forbidden)' });
    expect(stageTrail(c.events).at(-1)).toBe('agentctl_start:failed:AgentctlUnhealthy');
  });

  it('the controller’s rollback errors are on the session’s error and a diagnostic; the secrets and row stay', async () => {
    const c = setup({ startProcessError: new Error('no such file'), stopError: new Error('stop: agentctl unreachable') });
    const session = await insertTestSession(c.store);
    await launch(c, session).run();
    expect(c.executor.callsOf('stopInstance')).toHaveLength(1);
    expect((await c.store.getSession(session.id))?.error).toEqual({ stage: 'agent_start', message: 'agent_start: no such file (and rollback failed: stop: agentctl unreachable)' });
    expect(diagnostics(c.events)).toContainEqual({ reason: REASON.rollbackIncomplete, message: 'stop: agentctl unreachable' });
    const row = await c.store.getRuntime(session.id);
    expect(row?.state).toBe('ready');
    expect(await c.store.revealSecret(secretIds(row?.instanceId ?? '').authToken)).toBe('token-1');
  });
});

describe('SessionLaunch: a revive', () => {
  async function readySession(script: Partial<FakeScript> = {}) {
    const c = setup(script);
    const session = await insertTestSession(c.store);
    await launch(c, session).run();
    const row = await c.store.getRuntime(session.id);
    if (row === null) throw new Error('no row');
    c.events.length = 0;
    c.checkpoints.length = 0;
    c.rowAt.length = 0;
    return { c, session: await c.store.getSession(session.id) ?? session, row };
  }

  it('a resume hands the executor the recorded row and secrets, keeps the secret references and starts the agent again', async () => {
    const { c, session, row } = await readySession();
    c.executor.processes[0] = fakeProcess('agent-1', 'agent', 'exited');
    c.ctx.live.take(session.id);
    await c.store.upsertRuntime({ ...row, state: 'stopped' });
    c.executor.script.revived = true;
    await launch(c, session, { kind: 'revive', row: { ...row, state: 'stopped' }, intent: 'resume' }).run();
    const create = c.executor.callsOf('createInstance')[1];
    expect(create?.req.previous).toEqual({ metadata: row.metadata, secrets: { authToken: 'token-1', bootstrapNonce: 'nonce-1' } });
    expect(create?.req.releaseRuntimeInventory).toBeUndefined();
    expect(create?.req.identity.instanceId).toBe(row.instanceId);
    expect(c.rowAt.slice(0, 3)).toEqual(['workspace_created:workspace_created', 'agentctl_started:agentctl_started', 'agentctl_connected:agentctl_connected']);
    const after = await c.store.getRuntime(session.id);
    expect(after).toMatchObject({ state: 'ready', instanceId: row.instanceId });
    expect(after?.metadata).toMatchObject({ launch_kind: 'revive', agent_process_id: 'agent-2' });
    expect((await c.store.getSession(session.id))?.state).toBe('ready');
  });

  it('a failed resume keeps its row, back at stopped when nothing runs; the executor rolled back once and released nothing', async () => {
    const { c, session, row } = await readySession();
    c.ctx.live.take(session.id);
    c.executor.script = { ...c.executor.script, failAt: 'agentctl_connect', liveness: 'stopped' };
    await launch(c, session, { kind: 'revive', row, intent: 'resume' }).run();
    expect(c.executor.callsOf('rollback')).toEqual([{ op: 'rollback', errors: [], released: false }]);
    expect((await c.store.getRuntime(session.id))?.state).toBe('stopped');
    expect(await c.store.getSession(session.id)).toMatchObject({ state: 'failed', error: { stage: 'agentctl_connect' } });
  });

  it('a Pod replaced under a ready session: a pod_replaced stage says why and when, and the running agent starts again', async () => {
    const { c, session, row } = await readySession();
    const live = c.ctx.live.get(session.id);
    if (!live) throw new Error('not live');
    // the agent ended with the old Pod; the new Pod's agentctl lists it as orphaned
    c.executor.processes[0] = fakeProcess('agent-1', 'agent', 'exited');
    const at = '2026-01-02T03:04:05.000Z';
    c.executor.script.refresh = { revived: true, replaced: { reason: 'PodDeleted', message: "the session's Pod was deleted", at } };
    await launch(c, session, { kind: 'revive', row, intent: 'reconnect' }).refresh(live);
    expect(stageTrail(c.events)).toEqual(['pod_replaced:running', 'pod_replaced:succeeded:PodDeleted', 'agent_start:running', 'agent_start:succeeded']);
    const replaced = c.events.find((e) => e.type === 'stage' && e.stage.name === 'pod_replaced' && e.stage.status === 'succeeded');
    expect(replaced?.type === 'stage' && replaced.stage.message).toBe(`replaced at ${at}: the session's Pod was deleted; a new Pod runs on the same volume`);
    expect(replaced?.type === 'stage' && replaced.stage.startedAt).toBe(at);
    expect(diagnostics(c.events).map((d) => d.reason)).toEqual(['Replaced', 'AgentRestarted']);
    const fresh = c.ctx.live.get(session.id);
    expect(fresh?.agentProcessId).toBe('agent-2');
    expect((await c.store.getRuntime(session.id))?.metadata).toMatchObject({ agent_process_id: 'agent-2' });
    expect(await c.store.revealSecret(secretIds(row.instanceId).authToken)).toBe('token-2');
  });

  it('a replacement after the agent had exited does not run it again', async () => {
    const { c, session, row } = await readySession();
    const live = c.ctx.live.get(session.id);
    if (!live) throw new Error('not live');
    live.agent = { id: 'agent-1', status: 'exited', exitCode: 0 };
    c.executor.script.refresh = { revived: true, replaced: { reason: 'PodEvicted', message: 'evicted', at: new Date().toISOString() } };
    await launch(c, session, { kind: 'revive', row, intent: 'reconnect' }).refresh(live);
    expect(stageTrail(c.events)).toEqual(['pod_replaced:running', 'pod_replaced:succeeded:PodEvicted']);
    expect(c.executor.callsOf('startProcess')).toHaveLength(1);
    expect(c.ctx.live.get(session.id)?.agent).toMatchObject({ id: 'agent-1', status: 'exited' });
  });

  it('a workspace that went with its Pod fails the session for good and stops the row', async () => {
    const { c, session, row } = await readySession();
    const live = c.ctx.live.get(session.id);
    if (!live) throw new Error('not live');
    c.executor.script.refresh = { error: new LaunchError(INIT_STAGE, REASON.workspaceLost, 'the Pod is gone and its workspace was an emptyDir') };
    await expect(launch(c, session, { kind: 'revive', row, intent: 'reconnect' }).refresh(live)).rejects.toMatchObject({ reason: REASON.workspaceLost });
    expect(c.ctx.live.get(session.id)).toBeUndefined();
    expect((await c.store.getRuntime(session.id))?.state).toBe('stopped');
    const message = `the Pod is gone and its workspace was an emptyDir; remove the session with berth rm ${session.id}`;
    expect(await c.store.getSession(session.id)).toMatchObject({ state: 'failed', error: { stage: INIT_STAGE, message } });
    expect(diagnostics(c.events)).toContainEqual({ reason: REASON.workspaceLost, message });
  });
});
