/**
 * One launch or resume of a session, orchestrated over an executor: the stages with durable
 * checkpoints, the secrets stored encrypted, only then the `ready` row, then the agent. On failure
 * exactly what this launch created is rolled back and the session is marked failed with the
 * original error (rollback errors attached).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { isAgentctlHttpError } from '../client/index.js';
import type { CreateInstanceRequest, ExecutorInstance, InstanceSecrets, RepositoryCredentials, RepositorySpec, RuntimeCheckpoint, StageEvent } from '../executors/executor.js';
import { isLaunchError, LaunchError } from '../executors/executor.js';
import { SECRET_ID_KEY_PREFIX, type RuntimeRecord, type SessionRecord } from '../inventory/index.js';
import { errorMessage, withRollbackErrors } from '../shared/errors.js';
import { sanitize } from '../shared/sanitize.js';
import { diagnostic, secretIds, SECRET_REF, setSessionState, type ManagerContext } from './context.js';
import { reachedCheckpoint } from './hooks.js';
import { decodeRepoCredentials, repoCredentialId } from './repo-credentials.js';
import type { LiveSession } from './live.js';
import type { AgentProcessView, StageRecord } from './service.js';
import { staleShells } from './shell.js';
import { applyStageEvent, failOpenStages } from './stages.js';

export const AGENT_START_STAGE = 'agent_start';
const AGENT_PROCESS_KEY = 'agent_process_id';

/** The agent process a runtime row records (the latest run), if any. */
export function recordedAgentId(metadata: Readonly<Record<string, string>>): string | undefined {
  return metadata[AGENT_PROCESS_KEY];
}

/** Agent runs are `agent-1`, `agent-2` …: the run before `agent-N`, or null for the first (or a foreign id). */
export function previousAgentProcessId(id: string): string | null {
  const m = /^agent-([1-9]\d*)$/.exec(id);
  const n = m ? Number(m[1]) : 0;
  return n > 1 ? `agent-${n - 1}` : null;
}
/** Runtime metadata key: `fresh` or `revive`; recovery rolls a provisional fresh row back, a revive only stops. */
export const LAUNCH_KIND_KEY = 'launch_kind';

export type LaunchMode = { kind: 'fresh' } | { kind: 'revive'; row: RuntimeRecord };

export function newInstanceId(sessionId: string): string {
  return `${sessionId}-${randomBytes(3).toString('hex')}`;
}

export class SessionLaunch {
  #stages: StageRecord[] = [];
  #lastRow: RuntimeRecord | null = null;
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
    this.#lastRow = mode.kind === 'revive' ? mode.row : null;
  }

  get #sessionId(): string {
    return this.session.id;
  }

  /** Runs the launch to its end; never throws (the outcome is the session state). */
  async run(): Promise<void> {
    const { ctx } = this;
    const executor = ctx.executors.get(this.#executorName);
    ctx.events.resetReplay(this.#sessionId);
    const before = ctx.store.updateSession(this.#sessionId, { stages: [], error: null });
    // launch() already announced `launching` for a new session; resume and recovery announce it here
    if (before?.state !== 'launching' || this.mode.kind === 'revive') setSessionState(ctx, this.#sessionId, 'launching', null);
    if (!executor) {
      this.#fail(new LaunchError('initialize', 'ExecutorUnavailable', `executor '${this.#executorName}' is not available`));
      return;
    }
    let instance: ExecutorInstance;
    try {
      const secretEnv = this.#resolveSecretEnv();
      const previous = this.mode.kind === 'revive' ? { metadata: this.mode.row.metadata, secrets: this.#revealSecrets(this.mode.row) } : undefined;
      const { url, path, branch } = this.session.repository;
      const repository: RepositorySpec = { ...(url !== undefined ? { url } : {}), ...(path !== undefined ? { path } : {}), ...(branch !== undefined ? { branch } : {}) };
      // only a fresh launch clones; a revive keeps the workspace and needs no credential
      const repositoryCredentials = this.mode.kind === 'fresh' && this.session.repository.credentials === true ? this.#revealRepoCredentials() : undefined;
      const req: CreateInstanceRequest = {
        identity: { instanceId: this.#instanceId, sessionId: this.#sessionId, taskId: this.#sessionId, environmentId: this.#sessionId },
        repository,
        ...(repositoryCredentials ? { repositoryCredentials } : {}),
        env: this.session.request.env,
        secretEnv,
        profile: { executor: this.#executorName, type: 'local', settings: {}, env: this.session.request.profileEnv },
        onStage: (e) => this.#onStage(e),
        checkpointRuntimeInventory: (cp) => this.#checkpoint(cp),
        signal: this.signal,
        ...(previous ? { previous } : { releaseRuntimeInventory: async () => this.#release() }),
      };
      instance = await executor.createInstance(req);
    } catch (err) {
      // The executor has rolled back what it created. A revive keeps its row (resumable), back at `stopped`.
      if (this.mode.kind === 'revive') this.#markRowStopped();
      this.#fail(err);
      return;
    }
    try {
      await this.#complete(instance);
    } catch (err) {
      this.#fail(await this.#rollbackAfterConnect(instance, err));
    }
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
    ctx.store.updateSession(id, { stages: [], error: null });
    setSessionState(ctx, id, 'launching', null);
    try {
      const agent = await this.#stage(AGENT_START_STAGE, () => ensureAgent(ctx, this.session, live.instance));
      live.agentProcessId = agent.id;
      live.agent = agent;
      this.#writeRow('ready', { ...(this.#lastRow?.metadata ?? {}), [AGENT_PROCESS_KEY]: agent.id }, this.#lastRow?.secretRefs ?? {});
    } catch (err) {
      setSessionState(ctx, id, 'ready', { message: sanitize(errorMessage(err)), stage: AGENT_START_STAGE });
      throw err;
    }
    setSessionState(ctx, id, 'ready', null);
    ctx.log.info({ session: id, process: live.agentProcessId }, 'agent restarted');
  }

  /** Secrets first, then the `ready` row, then the agent (spec §4.8: a ready row can always reconnect). */
  async #complete(instance: ExecutorInstance): Promise<void> {
    const { ctx } = this;
    const ids = secretIds(this.#instanceId);
    ctx.store.putSecret(ids.authToken, instance.secrets.authToken);
    ctx.store.putSecret(ids.bootstrapNonce, instance.secrets.bootstrapNonce);
    reachedCheckpoint(ctx.hooks, 'secrets_stored', this.#sessionId);
    // On a pure reconnect the agent recorded by the earlier controller still belongs to this agentctl.
    const recordedAgent = this.mode.kind === 'revive' && !instance.revived ? this.mode.row.metadata[AGENT_PROCESS_KEY] : undefined;
    const carried: Record<string, string> = recordedAgent !== undefined ? { [AGENT_PROCESS_KEY]: recordedAgent } : {};
    this.#writeRow('ready', { ...instance.metadata, ...secretMetadata(ids), ...carried }, { [SECRET_REF.authToken]: ids.authToken, [SECRET_REF.bootstrapNonce]: ids.bootstrapNonce });
    reachedCheckpoint(ctx.hooks, 'ready', this.#sessionId);
    const live = ctx.live.replace(this.#sessionId, instance);
    const agent = await this.#stage(AGENT_START_STAGE, () => ensureAgent(ctx, this.session, instance, recordedAgent));
    const agentId = agent.id;
    live.agentProcessId = agentId;
    live.agent = agent;
    this.#writeRow('ready', { ...(this.#lastRow?.metadata ?? {}), [AGENT_PROCESS_KEY]: agentId }, this.#lastRow?.secretRefs ?? {});
    reachedCheckpoint(ctx.hooks, 'agent_started', this.#sessionId);
    if (this.mode.kind === 'revive') await endStaleShells(ctx, this.#sessionId, instance);
    setSessionState(ctx, this.#sessionId, 'ready', null, { workspacePath: instance.workspacePath });
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

  async #rollbackAfterConnect(instance: ExecutorInstance, err: unknown): Promise<Error> {
    const { ctx } = this;
    const primary = err instanceof Error ? err : new Error(String(err));
    const errors: unknown[] = [];
    ctx.live.take(this.#sessionId);
    const executor = ctx.executors.get(this.#executorName);
    const destroy = this.mode.kind === 'fresh';
    try {
      await executor?.stopInstance({ identity: instance.identity, metadata: this.#lastRow?.metadata ?? instance.metadata, control: instance.control }, { destroy, reason: 'rollback' });
    } catch (e) {
      errors.push(e);
    }
    if (errors.length === 0 && destroy) {
      try {
        const ids = secretIds(this.#instanceId);
        ctx.store.deleteSecret(ids.authToken);
        ctx.store.deleteSecret(ids.bootstrapNonce);
        this.#release();
      } catch (e) {
        errors.push(e);
      }
    } else if (!destroy) {
      this.#markRowStopped();
    }
    if (errors.length > 0) diagnostic(ctx, this.#sessionId, 'RollbackIncomplete', sanitize(errors.map(errorMessage).join('; ')));
    if (isLaunchError(primary)) primary.rollbackErrors = errors;
    return withRollbackErrors(primary, errors);
  }

  async #stage<T>(name: string, fn: () => Promise<T>): Promise<T> {
    this.#onStage({ stage: name, status: 'running', at: new Date() });
    try {
      const out = await fn();
      this.#onStage({ stage: name, status: 'succeeded', at: new Date() });
      return out;
    } catch (err) {
      const launchErr = isLaunchError(err) ? err : new LaunchError(name, 'Error', `${name}: ${sanitize(errorMessage(err))}`, { cause: err });
      this.#onStage({ stage: name, status: 'failed', at: new Date(), reason: launchErr.reason, message: launchErr.message });
      throw launchErr;
    }
  }

  #onStage(event: StageEvent): void {
    const { ctx } = this;
    const safe: StageEvent = { ...event, ...(event.message !== undefined ? { message: sanitize(event.message) } : {}) };
    const { stages, record } = applyStageEvent(this.#stages, safe);
    this.#stages = stages;
    try {
      ctx.store.updateSession(this.#sessionId, { stages });
    } catch (err) {
      ctx.log.warn({ session: this.#sessionId, err: errorMessage(err) }, 'cannot persist stage');
    }
    ctx.events.emit({ type: 'stage', sessionId: this.#sessionId, stage: record, at: record.endedAt ?? record.startedAt });
  }

  async #checkpoint(cp: RuntimeCheckpoint): Promise<void> {
    if (cp.state === 'ready' || cp.state === 'stopped' || cp.state === 'failed') {
      throw new Error(`checkpoint runtime inventory: executors must not write the final state '${cp.state}'`);
    }
    // a revive keeps the secret references of the row it revives
    const carried = this.mode.kind === 'revive' ? pickSecretMetadata(this.#lastRow?.metadata ?? {}) : {};
    this.#writeRow(cp.state, { ...carried, ...cp.metadata }, this.#lastRow?.secretRefs ?? {});
    reachedCheckpoint(this.ctx.hooks, cp.state, this.#sessionId);
  }

  #writeRow(state: string, metadata: Record<string, string>, secretRefs: Record<string, string>): void {
    this.#lastRow = this.ctx.store.upsertRuntime({
      sessionId: this.#sessionId,
      instanceId: this.#instanceId,
      executor: this.#executorName,
      state,
      metadata: { ...metadata, [LAUNCH_KIND_KEY]: this.mode.kind },
      stages: this.#stages,
      secretRefs,
    });
  }

  /** Compare-and-swap delete of the row this launch wrote (spec §4.1). */
  #release(): void {
    if (this.#lastRow !== null) this.ctx.store.releaseRuntime(this.#sessionId, this.#instanceId, this.#lastRow.updatedAt);
    this.#lastRow = null;
  }

  #markRowStopped(): void {
    const row = this.ctx.store.getRuntime(this.#sessionId);
    if (row && row.instanceId === this.#instanceId) {
      this.#lastRow = this.ctx.store.upsertRuntime({ ...row, state: 'stopped', stages: this.#stages });
    }
  }

  #fail(err: unknown): void {
    const stage = isLaunchError(err) ? err.stage : null;
    const message = sanitize(errorMessage(err));
    this.ctx.log.warn({ session: this.#sessionId, stage, err: message }, 'launch failed');
    const stages = failOpenStages(this.#stages, new Date(), message);
    this.ctx.store.updateSession(this.#sessionId, { stages });
    setSessionState(this.ctx, this.#sessionId, 'failed', { message, stage });
  }

  #resolveSecretEnv(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of this.session.request.secretEnv) {
      const value = this.ctx.secretSource(name);
      if (value === undefined) throw new LaunchError('initialize', 'SecretMissing', `secretEnv.${name}: is not set in the controller environment`);
      out[name] = value;
    }
    return out;
  }

  #revealRepoCredentials(): RepositoryCredentials {
    try {
      return decodeRepoCredentials(this.ctx.store.revealSecret(repoCredentialId(this.#sessionId)));
    } catch (err) {
      throw new LaunchError('initialize', 'CredentialsMissing', `repository.url: the stored credential of session ${this.#sessionId} cannot be read (remove the session and launch again)`, {
        cause: err,
      });
    }
  }

  #revealSecrets(row: RuntimeRecord): InstanceSecrets {
    const authId = row.secretRefs[SECRET_REF.authToken];
    const nonceId = row.secretRefs[SECRET_REF.bootstrapNonce];
    if (authId === undefined || nonceId === undefined) {
      throw new LaunchError('initialize', 'SecretsMissing', `runtime row of session ${row.sessionId} has no agentctl secrets (remove the session and launch again)`);
    }
    return { authToken: this.ctx.store.revealSecret(authId), bootstrapNonce: this.ctx.store.revealSecret(nonceId) };
  }
}

/**
 * Kills the shells an earlier controller run left running in the instance: their terminals are
 * gone with that controller, so nobody can reach them again (best effort: a failure is logged).
 */
async function endStaleShells(ctx: ManagerContext, sessionId: string, instance: ExecutorInstance): Promise<void> {
  try {
    const stale = staleShells(await instance.client.listProcesses(), ctx.runId);
    for (const p of stale) await instance.client.signal(p.id, 'SIGKILL').catch((err: unknown) => ctx.log.warn({ session: sessionId, process: p.id, err: errorMessage(err) }, 'cannot end stale shell'));
    if (stale.length > 0) diagnostic(ctx, sessionId, 'ShellsEnded', `ended ${stale.length} shell(s) left open by an earlier controller`);
  } catch (err) {
    ctx.log.warn({ session: sessionId, err: sanitize(errorMessage(err)) }, 'cannot list processes to end stale shells');
  }
}

function secretMetadata(ids: { authToken: string; bootstrapNonce: string }): Record<string, string> {
  return {
    [`${SECRET_ID_KEY_PREFIX}${SECRET_REF.authToken}`]: ids.authToken,
    [`${SECRET_ID_KEY_PREFIX}${SECRET_REF.bootstrapNonce}`]: ids.bootstrapNonce,
  };
}

function pickSecretMetadata(metadata: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(metadata)) if (k.startsWith(SECRET_ID_KEY_PREFIX)) out[k] = v;
  return out;
}

/**
 * Starts the session's agent unless one is already running in the instance (after a reconnect the
 * agent of the earlier controller keeps running: it must not be started twice). `recordedAgentId`
 * is the agent the ready row recorded for this same agentctl (pure reconnects only): when it has
 * run to its end it is not started again — it finished its task, and a controller restart must not
 * repeat it. A new agent starts when agentctl itself was (re)started (a resume after stop, or after
 * agentctl died) or when no agent was recorded yet (a launch cut short before the agent started).
 */
export async function ensureAgent(
  ctx: ManagerContext,
  session: SessionRecord,
  instance: ExecutorInstance,
  recordedAgentId?: string,
): Promise<AgentProcessView> {
  const processes = await instance.client.listProcesses();
  const agents = processes.filter((p) => p.kind === 'agent');
  const running = agents.find((p) => p.status === 'running');
  if (running) {
    ctx.log.info({ session: session.id, process: running.id }, 'agent already running; not starting another');
    return { id: running.id, status: 'running', exitCode: null };
  }
  const finished = instance.revived || recordedAgentId === undefined ? undefined : agents.find((p) => p.id === recordedAgentId);
  if (finished) {
    ctx.log.info({ session: session.id, process: finished.id, exitCode: finished.exit_code }, 'agent already ran to its end; not starting it again');
    return { id: finished.id, status: 'exited', exitCode: finished.exit_code };
  }
  const id = `agent-${agents.length + 1}`;
  const command = session.request.agentCommand;
  try {
    const info = await instance.client.startProcess({
      id,
      kind: 'agent',
      command,
      env: { ...session.request.agentEnv, BERTH_PROMPT: session.request.prompt ?? '' },
    });
    return { id: info.id, status: 'running', exitCode: null };
  } catch (err) {
    if (isAgentctlHttpError(err) && err.status === 400 && /cannot start/.test(err.message)) {
      const notFound = /ENOENT/.test(err.message);
      throw new LaunchError(
        AGENT_START_STAGE,
        notFound ? 'AgentCommandNotFound' : 'AgentStartFailed',
        notFound
          ? `agent '${session.agent}': command '${command[0] ?? ''}' was not found (check agents.${session.agent}.command in berth.yaml and PATH)`
          : `agent '${session.agent}': cannot start '${command[0] ?? ''}': ${sanitize(err.message)}`,
        { cause: err },
      );
    }
    throw err;
  }
}
