/**
 * One launch or resume of a session, orchestrated over an executor: the stages with durable
 * checkpoints, the secrets stored encrypted, only then the `ready` row, then the agent. On failure
 * exactly what this launch created is rolled back and the session is marked failed with the
 * original error (rollback errors attached).
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { CreateInstanceRequest, ExecutorInstance, ExecutorProfileSnapshot, ReplacementWording, RuntimeCheckpoint, StageEvent } from '../executors/executor.js';
import { replacementWording } from '../executors/executor.js';
import { ownValue } from '../shared/own.js';
import { INIT_STAGE, isLaunchError, LaunchError, REASON, reportStage, Rollback, ROLLBACK_STOP_REASON, runStage, sessionIdentity } from '../executors/launch-kit/index.js';
import type { RuntimeRecord, SessionRecord } from '../inventory/index.js';
import { errorMessage } from '../shared/errors.js';
import { sanitize } from '../shared/sanitize.js';
import { diagnostic, secretIds, SECRET_REF, setSessionState, type ManagerContext } from './context.js';
import { beforeCheckpoint, reachedCheckpoint } from './hooks.js';
import { launchSecretEnv, repositorySpec, revealInstanceSecrets, revealRepoCredentials } from './launch-inputs.js';
import { AGENT_PROCESS_KEY, AGENT_START_STAGE, endStaleShells, ensureAgent, lostAgent, recordedAgentId, recordedLostAgent } from './agent.js';
import { LaunchRow } from './launch-row.js';
import { pickSecretMetadata, secretMetadata } from './runtime-metadata.js';
import type { LiveSession } from './live.js';
import type { AgentProcessView, StageRecord } from './service.js';
import { applyStageEvent, failOpenStages } from './stages.js';

/**
 * `fresh`: a new instance and a new agent. `revive`: the recorded instance, reconnected (or its
 * agentctl restarted with a fresh nonce). Its `intent` decides about the agent: an explicit
 * `resume` starts a new agent when the recorded one cannot go on; a `reconnect` (recovery at
 * start-up) never does — an agent whose agentctl died is reported lost, not silently re-run.
 */
export type LaunchMode = { kind: 'fresh' } | { kind: 'revive'; row: RuntimeRecord; intent: 'resume' | 'reconnect' };

/** A new instance id of session `sessionId` (the session id and a random suffix). */
function newInstanceId(sessionId: string): string {
  return `${sessionId}-${randomBytes(3).toString('hex')}`;
}

export class SessionLaunch {
  #stages: StageRecord[] = [];
  /** The stage writes in flight, in order (the listener is synchronous; the store is not). */
  #stageWrites: Promise<void> = Promise.resolve();
  readonly #row: LaunchRow;
  /** This launch's stage listener (for the kit's guarded stage runner and reports). */
  readonly #listener = (event: StageEvent): void => this.#onStage(event);
  readonly #instanceId: string;
  readonly #executorName: string;

  constructor(
    private readonly ctx: ManagerContext,
    private readonly session: SessionRecord,
    private readonly mode: LaunchMode,
    executorName: string,
    private readonly signal: AbortSignal,
  ) {
    this.#executorName = executorName;
    this.#instanceId = mode.kind === 'revive' ? mode.row.instanceId : newInstanceId(session.id);
    this.#row = new LaunchRow(ctx.store, { sessionId: session.id, instanceId: this.#instanceId, executor: executorName, kind: mode.kind }, mode.kind === 'revive' ? mode.row : null, () => this.#stages);
  }

  get #sessionId(): string {
    return this.session.id;
  }

  /** Runs the launch to its end; never throws (the outcome is the session state). */
  async run(): Promise<void> {
    const { ctx } = this;
    const executor = ctx.executors.get(this.#executorName);
    ctx.events.resetReplay(this.#sessionId);
    const before = await ctx.store.updateSession(this.#sessionId, { stages: [], error: null });
    // launch() already announced `launching` for a new session; resume and recovery announce it here
    if (before?.state !== 'launching' || this.mode.kind === 'revive') await setSessionState(ctx, this.#sessionId, 'launching', null);
    if (!executor) {
      await this.#fail(new LaunchError(INIT_STAGE, 'ExecutorUnavailable', `executor '${this.#executorName}' is not available`));
      return;
    }
    let instance: ExecutorInstance;
    try {
      instance = await executor.createInstance(await this.#createRequest());
    } catch (err) {
      // The executor has rolled back what it created. A revive keeps its row (resumable): back at
      // `stopped` when nothing runs, left `ready` when the instance still runs (a transient failure
      // to reach it must not record a running instance as stopped).
      if (this.mode.kind === 'revive') await this.#settleFailedRevive(this.mode.row);
      await this.#fail(err);
      return;
    }
    try {
      await this.#complete(instance);
    } catch (err) {
      await this.#fail(await this.#rollbackAfterConnect(instance, err));
    }
  }

  /** What the executor gets: the identity, repository, env, recorded profile and this launch's callbacks. */
  async #createRequest(): Promise<CreateInstanceRequest> {
    const { ctx, session } = this;
    const profile = this.#profile();
    const secretEnv = await launchSecretEnv(ctx, session, profile);
    const previous = this.mode.kind === 'revive' ? { metadata: this.mode.row.metadata, secrets: await revealInstanceSecrets(ctx, this.mode.row) } : undefined;
    // only a fresh launch clones; a revive keeps the workspace and needs no credential
    const repositoryCredentials = this.mode.kind === 'fresh' && session.repository.credentials === true ? await revealRepoCredentials(ctx, this.#sessionId) : undefined;
    return {
      identity: sessionIdentity(this.#sessionId, this.#instanceId),
      repository: repositorySpec(session),
      ...(repositoryCredentials ? { repositoryCredentials } : {}),
      env: session.request.env,
      secretEnv,
      profile,
      onStage: this.#listener,
      onDiagnostic: (reason, message) => diagnostic(ctx, this.#sessionId, reason, sanitize(message)),
      checkpointRuntimeInventory: (cp) => this.#checkpoint(cp),
      signal: this.signal,
      ...(previous ? { previous } : { releaseRuntimeInventory: () => this.#row.release() }),
    };
  }

  /**
   * Starts the agent again in a ready, connected session whose agent has exited (`berth resume`):
   * only the `agent_start` stage runs. Throws when the agent cannot be started; the session stays
   * ready (with the error) because its workspace and agentctl are fine.
   */
  async restartAgent(live: LiveSession): Promise<void> {
    const { ctx } = this;
    const id = this.#sessionId;
    ctx.events.resetReplay(id);
    await ctx.store.updateSession(id, { stages: [], error: null });
    await setSessionState(ctx, id, 'launching', null);
    try {
      const agent = await this.#stage(AGENT_START_STAGE, () => ensureAgent(ctx, this.session, live.instance));
      live.agentProcessId = agent.id;
      live.agent = agent;
      await this.#row.writeAgent(agent.id, null);
    } catch (err) {
      await setSessionState(ctx, id, 'ready', { message: sanitize(errorMessage(err)), stage: AGENT_START_STAGE });
      throw err;
    }
    await this.#stagesWritten();
    await setSessionState(ctx, id, 'ready', null);
    ctx.log.info({ session: id, process: live.agentProcessId }, 'agent restarted');
  }

  /**
   * Re-attaches a ready session whose connection died (a dropped forward, a dead or restarted
   * agentctl) through the executor's refresh: no `launching` state; an agent whose agentctl died is
   * reported lost. When the executor had to replace the Pod (gone, evicted, failed) the session
   * records why and when and its running agent is started again; an emptyDir workspace that went
   * with its Pod fails the session. Throws when the instance cannot be reached. `cause`: what the
   * executor saw go wrong (e.g. an OOM kill), named in the lost agent's reason.
   */
  async refresh(live: LiveSession, cause?: { reason: string; message: string }): Promise<void> {
    const { ctx } = this;
    const id = this.#sessionId;
    const executor = ctx.executors.get(this.#executorName);
    if (!executor) throw new Error(`executor '${this.#executorName}' is not configured any more`);
    // the entry stays while the refresh runs (status reads still find the session's agent)
    const before = live.agent;
    let instance: ExecutorInstance;
    try {
      instance = await executor.refreshInstance(live.instance, {
        env: this.session.request.env,
        secretEnv: await launchSecretEnv(ctx, this.session, this.#profile()),
        profile: this.#profile(),
        onStage: (e) => {
          if (e.status === 'waiting' || e.status === 'failed') diagnostic(ctx, id, e.reason ?? REASON.reconnecting, sanitize(e.message ?? e.stage));
        },
        checkpointRuntimeInventory: (cp) => this.#checkpoint(cp),
        signal: this.signal,
        ...(cause ? { cause } : {}),
      });
    } catch (err) {
      if (ctx.live.get(id) === live) ctx.live.take(id);
      if (isLaunchError(err) && err.reason === REASON.workspaceLost) await this.#workspaceLost(err);
      throw err;
    }
    const agentId = live.agentProcessId ?? (this.mode.kind === 'revive' ? recordedAgentId(this.mode.row.metadata) : undefined) ?? null;
    const fresh = await this.#storeReady(instance, agentId);
    if (instance.replaced) {
      await this.#afterReplacement(fresh, instance, { ...instance.replaced, ...replacementWording(executor.capabilities) }, agentId, before);
    } else if (instance.revived && agentId !== null) {
      await this.#markAgentLost(fresh, agentId, cause ? `its agentctl stopped and the agent with it (${cause.reason}: ${sanitize(cause.message)})` : undefined);
    } else {
      fresh.agentProcessId = agentId;
      fresh.agent = live.agent;
    }
    ctx.log.info({ session: id, instance: this.#instanceId, revived: instance.revived }, 'session reconnected');
  }

  /** Secrets first, then the `ready` row, then the agent (spec §4.8: a ready row can always reconnect). */
  async #complete(instance: ExecutorInstance): Promise<void> {
    const { ctx } = this;
    const recorded = this.mode.kind === 'revive' ? recordedAgentId(this.mode.row.metadata) : undefined;
    // A reconnect to a restarted agentctl: the agent the earlier one ran died with it.
    const lost = this.mode.kind === 'revive' && this.mode.intent === 'reconnect' && instance.revived && recorded !== undefined;
    // On a pure reconnect the agent recorded by the earlier controller still belongs to this agentctl.
    const carried = recorded !== undefined && (!instance.revived || lost) ? recorded : null;
    const live = await this.#storeReady(instance, carried);
    reachedCheckpoint(ctx.hooks, 'ready', this.#sessionId);
    if (lost) {
      await this.#markAgentLost(live, recorded);
    } else {
      const fresh = this.mode.kind === 'fresh';
      const agent = await this.#stage(AGENT_START_STAGE, () => ensureAgent(ctx, this.session, instance, instance.revived ? undefined : recorded, fresh));
      const stillLost = agent.id === recorded && agent.status !== 'running' && this.mode.kind === 'revive' ? recordedLostAgent(this.mode.row.metadata) : null;
      live.agentProcessId = agent.id;
      live.agent = stillLost ?? agent;
      await this.#row.writeAgent(agent.id, stillLost?.lostReason ?? null);
    }
    reachedCheckpoint(ctx.hooks, 'agent_started', this.#sessionId);
    if (this.mode.kind === 'revive') await endStaleShells(ctx, this.#sessionId, instance);
    await this.#stagesWritten();
    await setSessionState(ctx, this.#sessionId, 'ready', null, { workspacePath: instance.workspacePath });
    ctx.log.info(
      {
        session: this.#sessionId,
        instance: this.#instanceId,
        kind: this.mode.kind,
        revived: instance.revived,
        stages: Object.fromEntries(this.#stages.map((s) => [s.name, s.durationMs])),
      },
      'session ready',
    );
  }

  /** Stores the instance secrets, writes the `ready` row (with the agent it carries) and installs the live entry. */
  async #storeReady(instance: ExecutorInstance, agentId: string | null): Promise<LiveSession> {
    const { ctx } = this;
    const ids = secretIds(this.#instanceId);
    await ctx.store.putSecret(ids.authToken, instance.secrets.authToken);
    await ctx.store.putSecret(ids.bootstrapNonce, instance.secrets.bootstrapNonce);
    reachedCheckpoint(ctx.hooks, 'secrets_stored', this.#sessionId);
    const metadata = { ...instance.metadata, ...secretMetadata(ids), ...(agentId !== null ? { [AGENT_PROCESS_KEY]: agentId } : {}) };
    await this.#row.write('ready', metadata, { [SECRET_REF.authToken]: ids.authToken, [SECRET_REF.bootstrapNonce]: ids.bootstrapNonce });
    return ctx.live.replace(this.#sessionId, instance);
  }

  /**
   * A ready session whose machine was replaced (a Pod deleted, evicted, failed), told in the words
   * its executor declares: `berth status` keeps why and when (the replacement stage, e.g.
   * `pod_replaced`), and an agent that was running when the machine went is started again as a new
   * run (the earlier run's output stays readable as the previous run). An agent that had already
   * exited is not re-run.
   */
  async #afterReplacement(
    fresh: LiveSession,
    instance: ExecutorInstance,
    replaced: NonNullable<ExecutorInstance['replaced']> & ReplacementWording,
    agentId: string | null,
    before: AgentProcessView | null,
  ): Promise<void> {
    const { ctx } = this;
    const id = this.#sessionId;
    const note = `replaced at ${replaced.at}: ${replaced.message}; ${replaced.note}`;
    const noticed = new Date(replaced.at);
    reportStage(this.#listener, { stage: replaced.stage, status: 'running', at: Number.isNaN(noticed.getTime()) ? new Date() : noticed });
    reportStage(this.#listener, { stage: replaced.stage, status: 'succeeded', reason: replaced.reason, message: note });
    diagnostic(ctx, id, 'Replaced', `${replaced.reason}: ${note}`);
    if (agentId === null || before?.status === 'exited') {
      fresh.agentProcessId = agentId;
      fresh.agent = before;
      return;
    }
    try {
      const agent = await this.#stage(AGENT_START_STAGE, () => ensureAgent(ctx, this.session, instance));
      fresh.agentProcessId = agent.id;
      fresh.agent = agent;
      await this.#row.writeAgent(agent.id, null);
      diagnostic(ctx, id, 'AgentRestarted', `agent ${agentId} ended with the replaced ${replaced.machine}; started ${agent.id} in the new one (berth logs --previous ${id} shows the earlier run)`);
      ctx.log.info({ session: id, previous: agentId, process: agent.id, reason: replaced.reason }, `agent started again after a ${replaced.machine} replacement`);
    } catch (err) {
      await this.#markAgentLost(fresh, agentId, `it ended with the replaced ${replaced.machine} (${replaced.reason}) and could not be started again: ${sanitize(errorMessage(err))}`);
    }
  }

  /** The workspace went with its Pod (emptyDir): the session fails with what to do; nothing is re-created. */
  async #workspaceLost(err: LaunchError): Promise<void> {
    const message = `${sanitize(err.message)}; remove the session with berth rm ${this.#sessionId}`;
    await this.#row.markStopped();
    diagnostic(this.ctx, this.#sessionId, REASON.workspaceLost, message);
    await setSessionState(this.ctx, this.#sessionId, 'failed', { message, stage: err.stage });
  }

  /** Records (durably) and reports that the agent died with its agentctl. */
  async #markAgentLost(live: LiveSession, agentId: string, reason = 'its agentctl stopped (killed, crashed or its container restarted) and the agent with it'): Promise<void> {
    live.agentProcessId = agentId;
    live.agent = lostAgent(agentId, reason);
    await this.#row.writeAgent(agentId, reason);
    diagnostic(this.ctx, this.#sessionId, 'AgentLost', `agent ${agentId} is lost: ${reason}; it is not started again by itself (berth resume ${this.#sessionId} starts it)`);
    this.ctx.log.warn({ session: this.#sessionId, process: agentId }, 'agent lost with its agentctl');
  }

  /** A failed revive: `stopped` when nothing of the instance runs any more, else the row is left as it was. */
  async #settleFailedRevive(row: RuntimeRecord): Promise<void> {
    if (row.state === 'ready') {
      const status = await this.ctx.executors
        .get(this.#executorName)
        ?.status({ identity: sessionIdentity(row.sessionId, row.instanceId), metadata: row.metadata })
        .catch(() => null);
      if (status && (status.liveness === 'running' || status.liveness === 'unreachable')) {
        const current = await this.ctx.store.getRuntime(this.#sessionId);
        if (current && current.instanceId === this.#instanceId && current.state !== 'ready') this.#row.adopt(await this.ctx.store.upsertRuntime({ ...current, state: 'ready', metadata: row.metadata }));
        return;
      }
    }
    await this.#row.markStopped();
  }

  /**
   * Undoes a launch that failed after the executor connected (the agent could not start, the
   * `ready` row could not be written): the instance is stopped under the kit's rollback deadline
   * (destroyed on a fresh launch, whose secrets and row then go; a revive's row goes back to
   * `stopped`), and the original error comes back with the rollback's errors attached.
   */
  async #rollbackAfterConnect(instance: ExecutorInstance, err: unknown): Promise<Error> {
    const { ctx } = this;
    ctx.live.detach(this.#sessionId);
    const executor = ctx.executors.get(this.#executorName);
    const destroy = this.mode.kind === 'fresh';
    const rb = new Rollback();
    await rb.step('stop the instance', async () =>
      executor?.stopInstance(
        { identity: instance.identity, metadata: this.#row.current?.metadata ?? instance.metadata, control: instance.control, profile: this.#profile() },
        { destroy, reason: ROLLBACK_STOP_REASON, signal: rb.signal },
      ),
    );
    await instance.close().catch(() => undefined);
    if (destroy) {
      await rb.step('remove the secrets and the runtime row', async () => {
        const ids = secretIds(this.#instanceId);
        await ctx.store.deleteSecret(ids.authToken);
        await ctx.store.deleteSecret(ids.bootstrapNonce);
        await this.#row.release();
      });
    } else {
      await this.#row.markStopped();
    }
    if (!rb.clean) diagnostic(ctx, this.#sessionId, REASON.rollbackIncomplete, sanitize(rb.errors.map(errorMessage).join('; ')));
    return rb.finish(err);
  }

  /** Waits until the stages written so far (and the latest ones) are durable. */
  async #stagesWritten(): Promise<void> {
    const written = this.#stageWrites.then(() => this.ctx.store.updateSession(this.#sessionId, { stages: this.#stages }));
    this.#stageWrites = written.then(() => undefined, () => undefined);
    await written;
  }

  #stage<T>(name: string, fn: () => Promise<T>): Promise<T> {
    return runStage(this.#listener, name, fn);
  }

  #onStage(event: StageEvent): void {
    const { ctx } = this;
    const safe: StageEvent = { ...event, ...(event.message !== undefined ? { message: sanitize(event.message) } : {}) };
    const { stages, record } = applyStageEvent(this.#stages, safe);
    this.#stages = stages;
    // written in order, each write the stages as they are by then (a burst of events is one write or two)
    this.#stageWrites = this.#stageWrites.then(async () => {
      try {
        await ctx.store.updateSession(this.#sessionId, { stages: this.#stages });
      } catch (err) {
        ctx.log.warn({ session: this.#sessionId, err: errorMessage(err) }, 'cannot persist stage');
      }
    });
    ctx.events.emit({ type: 'stage', sessionId: this.#sessionId, stage: record, at: record.endedAt ?? record.startedAt });
  }

  async #checkpoint(cp: RuntimeCheckpoint): Promise<void> {
    if (cp.state === 'ready' || cp.state === 'stopped' || cp.state === 'failed') {
      throw new Error(`checkpoint runtime inventory: executors must not write the final state '${cp.state}'`);
    }
    beforeCheckpoint(this.ctx.hooks, cp.state);
    // a revive keeps the secret references of the row it revives
    const carried = this.mode.kind === 'revive' ? pickSecretMetadata(this.#row.metadata) : {};
    await this.#row.write(cp.state, { ...carried, ...cp.metadata }, this.#row.secretRefs);
    reachedCheckpoint(this.ctx.hooks, cp.state, this.#sessionId);
  }

  async #fail(err: unknown): Promise<void> {
    const stage = isLaunchError(err) ? err.stage : null;
    const lost = isLaunchError(err) && err.reason === REASON.workspaceLost ? `; remove the session with berth rm ${this.#sessionId}` : '';
    const message = `${sanitize(errorMessage(err))}${lost}`;
    this.ctx.log.warn({ session: this.#sessionId, stage, err: message }, 'launch failed');
    this.#stages = failOpenStages(this.#stages, new Date(), message);
    await this.#stagesWritten();
    await setSessionState(this.ctx, this.#sessionId, 'failed', { message, stage });
  }

  /**
   * The snapshot the session recorded at launch. A row from before snapshots were recorded gets one
   * of its executor entry's type, without settings (the executor's own defaults apply).
   */
  #profile(): ExecutorProfileSnapshot {
    const recorded = this.session.request.profile;
    if (recorded) return recorded;
    const entry = ownValue(this.ctx.config.executors, this.#executorName);
    if (!entry) throw new LaunchError(INIT_STAGE, 'ExecutorUnavailable', `executor '${this.#executorName}' is not configured any more`);
    return { executor: this.#executorName, profile: null, type: entry.type, settings: {}, env: this.session.request.profileEnv };
  }
}
