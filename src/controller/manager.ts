/**
 * The session manager: implements SessionService over the inventory, the executors and the live
 * session map. Launches run in the background under a per-session lock; everything else is on
 * demand (idle sessions cost nothing: no polling).
 * @module
 */
import { isProvisionalState } from '../inventory/index.js';
import { abortable } from '../shared/abortable.js';
import { errorMessage } from '../shared/errors.js';
import { sanitize } from '../shared/sanitize.js';
import { sessionExecutorName, type ManagerContext } from './context.js';
import { reachedCheckpoint } from './hooks.js';
import { SessionLaunch, type LaunchMode } from './launch.js';
import { LiveAccess } from './live-access.js';
import { WorkspaceOps } from './workspace-ops.js';
import { ConversationOps } from './conversation.js';
import { recoverSession } from './recover.js';
import { SelfHeal } from './self-heal.js';
import { startUnrecordedSweeps } from './unrecorded-sweep.js';
import { startIdleSuspension } from './idle-suspend.js';
import { startWarmPools } from './warm-pools.js';
import { listPools, removePool } from './pools.js';
import { createSession } from './create-session.js';
import { removeSession } from './remove.js';
import { stopSession } from './stop.js';
import { sweepOrphanSecrets } from './orphan-secrets.js';
import {
  SessionStateError,
  type AgentEventPage,
  type ApproveRequest,
  type ApproveResult,
  type ExecOptions,
  type LaunchRequest,
  type OutputChunkView,
  type SessionEvent,
  type SessionService,
  type SessionView,
  type SessionWorkspace,
  type SessionWorkspaceService,
  type SessionConversationService,
  type SessionPoolService,
  type ShellOptions,
  type ShellSession,
} from './service.js';
import type { EgressPage, EgressQuery, PoolRemoveResult, PoolView } from '../api/index.js';
import { checkLaunch, launchValidationError, type LaunchCheckContext } from './validate.js';
import { checkRepository } from './repo-check.js';
import { toView } from './views.js';
import { followersSettled, followLiveOutput } from './output-follow.js';
import { readEgress } from './egress-view.js';

const SETTLED = new Set(['ready', 'stopped', 'suspended', 'failed']);
/** Sessions recovered at once at start-up (each may hold API calls and port-forwards open). */
const RECOVERY_CONCURRENCY = 8;
/** Deadline of one session's recovery (a reconnect; a Pod replacement belongs to a resume). */
const RECOVERY_TIMEOUT_MS = 60_000;

export class SessionManager implements SessionService, SessionWorkspaceService, SessionConversationService, SessionPoolService {
  readonly #ctx: ManagerContext;
  /** In-flight background work per session (launch/resume), awaited by close() and waitUntilSettled(). */
  readonly #inflight = new Map<string, Promise<void>>();
  readonly #shutdown = new AbortController();
  /** Cancels the launch/resume in flight per session (a remove does not wait for a slow clone). */
  readonly #cancels = new Map<string, AbortController>();
  /** Open shells, killed by close(): a shell nobody can reach again must not outlive the controller. */
  readonly #shells = new Set<{ end(): Promise<void> }>();
  #closed = false;

  /** What the launch check reads besides the request: the config, the executors' capabilities, the secrets' presence. */
  readonly #launchCheck: LaunchCheckContext;
  readonly #access: LiveAccess;
  readonly #ops: WorkspaceOps;
  readonly #conversation: ConversationOps;
  /** Watches ready sessions' instances and heals them without a command. */
  readonly #heal: SelfHeal;
  /** Stops the executors' sweeps of unrecorded objects (started by recover()). */
  #stopSweeps: (() => Promise<void>) | null = null;
  /** Stops the idle suspension polls (started by recover() when a launch target has `idle:`). */
  #stopIdle: (() => Promise<void>) | null = null;
  #stopPools: (() => Promise<void>) | null = null;

  constructor(ctx: ManagerContext) {
    this.#ctx = ctx;
    this.#access = new LiveAccess(ctx, this.#shutdown.signal);
    this.#access.waker = (id) => this.#wake(id);
    this.#ops = new WorkspaceOps(ctx, this.#access, this.#shells);
    this.#conversation = new ConversationOps(this.#access);
    this.#heal = new SelfHeal(ctx, this.#shutdown.signal);
    ctx.live.onOpen = (id, entry) => followLiveOutput(ctx, id, entry);
    this.#launchCheck = {
      config: ctx.config,
      capabilitiesOf: (name) => ctx.executors.get(name)?.capabilities,
      isSecretSet: (name) => ctx.secretSource(name) !== undefined,
      snapshotProfile: (name) => ctx.snapshotProfile(name),
    };
  }

  // ---- launch / resume ------------------------------------------------------------------------

  async launch(req: LaunchRequest): Promise<SessionView> {
    this.#assertOpen();
    // One pure check of the whole request, then the one I/O check, then the launch.
    const checked = checkLaunch(req, this.#launchCheck);
    if (!checked.ok) throw launchValidationError(checked.problems);
    const { launch } = checked;
    // A missing path, a plain directory, file:///nope or an unknown branch: refused before the session exists.
    await checkRepository(launch.repository, launch.capabilities);
    const record = await createSession(this.#ctx, req.name ?? null, launch);
    this.#ctx.events.emit({ type: 'state', sessionId: record.id, state: 'launching', error: null, at: record.createdAt });
    reachedCheckpoint(this.#ctx.hooks, 'session_created', record.id);
    this.#background(record.id, () => this.#runLaunch(record.id, launch.executor, { kind: 'fresh' }));
    return toView(record, undefined);
  }

  async resume(id: string): Promise<SessionView> {
    this.#assertOpen();
    await this.#access.require(id);
    const current = this.#inflight.get(id);
    if (current) await current;
    const run = this.#ctx.locks.run(id, async () => {
      const session = await this.#access.require(id);
      const live = this.#ctx.live.get(id);
      if (session.state === 'ready' && live && live.agentProcessId !== null && (await this.#access.refreshAgent(id, live))) {
        const row = await this.#ctx.store.getRuntime(id);
        if ((live.agent?.status === 'exited' || live.agent?.status === 'lost') && row) {
          // The agent ran to its end (or died): start a new one in the same, connected workspace.
          await this.#cancellable(id, (signal) => new SessionLaunch(this.#ctx, session, { kind: 'revive', row, intent: 'resume' }, row.executor, signal).restartAgent(live));
          return;
        }
        // A resume that queued behind another launch or resume got what it asked for.
        if (current) return;
        throw new SessionStateError(id, 'ready', 'resume', 'its agent is running', `session '${id}' is already ready (agent running); nothing to resume`);
      }
      if (session.state === 'removing') throw new SessionStateError(id, 'removing', 'resume', 'it is being removed');
      const executorName = sessionExecutorName(this.#ctx, session);
      let row = await this.#ctx.store.getRuntime(id);
      if (row && isProvisionalState(row.state)) {
        // a launch cut short that could not be rolled back yet: finish its cleanup first
        await recoverSession(this.#ctx, session, { force: true });
        row = await this.#ctx.store.getRuntime(id);
      }
      const mode: LaunchMode = row && !isProvisionalState(row.state) ? { kind: 'revive', row, intent: 'resume' } : { kind: 'fresh' };
      await this.#cancellable(id, (signal) => new SessionLaunch(this.#ctx, session, mode, executorName, signal).run());
    });
    this.#track(id, run.then(() => undefined, () => undefined));
    await run;
    return this.get(id);
  }

  async #runLaunch(id: string, executorName: string, mode: LaunchMode): Promise<void> {
    await this.#ctx.locks.run(id, async () => {
      const session = await this.#ctx.store.getSession(id);
      if (!session) return;
      await this.#cancellable(id, (signal) => new SessionLaunch(this.#ctx, session, mode, executorName, signal).run());
    });
  }

  /** Runs a launch with a signal that close() and remove() abort. */
  async #cancellable(id: string, fn: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const cancel = new AbortController();
    this.#cancels.set(id, cancel);
    try {
      await fn(AbortSignal.any([this.#shutdown.signal, cancel.signal]));
    } finally {
      if (this.#cancels.get(id) === cancel) this.#cancels.delete(id);
    }
  }

  // ---- read -----------------------------------------------------------------------------------

  async list(): Promise<SessionView[]> {
    const records = await this.#ctx.store.listSessions();
    // the agents' status is read fresh (in parallel, bounded), so an agent that exited shows as exited
    await Promise.all(records.map((r) => [r.id, this.#ctx.live.get(r.id)] as const).map(([id, live]) => (live?.agentProcessId ? this.#access.refreshAgent(id, live) : undefined)));
    return records.map((r) => toView(r, this.#ctx.live.get(r.id)));
  }

  async get(id: string): Promise<SessionView> {
    const record = await this.#access.require(id);
    const live = this.#ctx.live.get(id);
    if (live?.agentProcessId) await this.#access.refreshAgent(id, live);
    return toView(record, live);
  }

  async waitUntilSettled(id: string, opts: { signal?: AbortSignal } = {}): Promise<SessionView> {
    opts.signal?.throwIfAborted();
    const pending = this.#inflight.get(id);
    if (pending) await abortable(pending, opts.signal);
    const view = await this.get(id);
    if (SETTLED.has(view.state)) return view;
    // stopping/removing (or a launch queued behind them): wait for the lock holder, then look again
    await abortable(this.#ctx.locks.run(id, () => Promise.resolve()), opts.signal);
    const pendingAfter = this.#inflight.get(id);
    if (pendingAfter) await abortable(pendingAfter, opts.signal);
    return this.get(id);
  }

  // ---- stop / remove --------------------------------------------------------------------------

  async stop(id: string): Promise<SessionView> {
    await this.#access.require(id);
    await this.#ctx.locks.run(id, async () => stopSession(this.#ctx, await this.#access.require(id), { reason: 'user_stop', state: 'stopped' }));
    return this.get(id);
  }

  async remove(id: string, opts: { force?: boolean } = {}): Promise<void> {
    await this.#access.require(id);
    // A launch in flight is cancelled (it rolls back what it created) rather than waited for.
    this.#cancels.get(id)?.abort(new Error(`session ${id} is being removed`));
    await this.#ctx.locks.run(id, async () => {
      await removeSession(this.#ctx, await this.#access.require(id), { force: opts.force === true });
    });
  }

  // ---- in the workspace -----------------------------------------------------------------------

  exec(id: string, argv: string[], opts: ExecOptions = {}): Promise<{ exitCode: number | null; signal: string | null }> {
    return this.#ops.exec(id, argv, opts);
  }

  openShell(id: string, opts: ShellOptions): Promise<ShellSession> {
    return this.#ops.openShell(id, opts);
  }

  logs(id: string, opts: { from?: number; follow?: boolean; previous?: boolean; signal?: AbortSignal }): AsyncIterable<OutputChunkView> {
    return this.#ops.logs(id, opts);
  }

  async sendInput(id: string, data: string | Uint8Array, opts: { eof?: boolean } = {}): Promise<void> {
    return (await this.#conversation.isAcp(id)) ? this.#conversation.send(id, data, opts) : this.#ops.sendInput(id, data, opts);
  }

  cancel(id: string): Promise<void> {
    return this.#conversation.cancel(id);
  }

  pools(): Promise<PoolView[]> {
    return listPools(this.#ctx);
  }

  removePool(profile: string): Promise<PoolRemoveResult> {
    return removePool(this.#ctx, profile);
  }

  approve(id: string, answer: ApproveRequest): Promise<ApproveResult> {
    return this.#conversation.approve(id, answer);
  }

  agentEvents(id: string, opts: { from?: number; limit?: number; wait?: number; signal?: AbortSignal }): Promise<AgentEventPage> {
    return this.#conversation.agentEvents(id, opts);
  }

  workspace(id: string): Promise<SessionWorkspace> {
    return this.#ops.workspace(id);
  }

  egress(id: string, query: EgressQuery = {}): Promise<EgressPage> {
    return readEgress(this.#ctx, id, query);
  }

  subscribe(listener: (event: SessionEvent) => void, filter?: { sessionId?: string }): () => void {
    return this.#ctx.events.subscribe(listener, filter);
  }

  // ---- life cycle -----------------------------------------------------------------------------

  /**
   * Reconnects ready sessions and cleans up launches cut short by a restart (call once at start-up).
   * Bounded: at most RECOVERY_CONCURRENCY sessions at a time, each under its own deadline, all
   * cancelled by close(). A session whose recovery fails or times out keeps its row (a later
   * resume retries); it is never recorded as stopped while its instance may still run.
   */
  async recover(opts: { concurrency?: number; perSessionTimeoutMs?: number } = {}): Promise<void> {
    const queue = [...(await this.#ctx.store.listSessions())];
    const timeoutMs = opts.perSessionTimeoutMs ?? RECOVERY_TIMEOUT_MS;
    const worker = async (): Promise<void> => {
      for (let s = queue.shift(); s !== undefined && !this.#shutdown.signal.aborted; s = queue.shift()) {
        const session = s;
        const signal = AbortSignal.any([this.#shutdown.signal, AbortSignal.timeout(timeoutMs)]);
        await this.#ctx.locks
          .run(session.id, () => recoverSession(this.#ctx, session, { force: false, signal }))
          .catch((err: unknown) => this.#ctx.log.error({ session: session.id, err: sanitize(errorMessage(err)) }, 'recovery failed'));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? RECOVERY_CONCURRENCY) }, worker));
    if (!this.#shutdown.signal.aborted) await sweepOrphanSecrets(this.#ctx.store).catch((err: unknown) => this.#ctx.log.warn({ err: sanitize(errorMessage(err)) }, 'orphan secret sweep failed'));
    // objects no session records (a create that committed after its launch gave up): in the background
    if (!this.#shutdown.signal.aborted && this.#stopSweeps === null) this.#stopSweeps = startUnrecordedSweeps(this.#ctx);
    if (!this.#shutdown.signal.aborted && this.#stopIdle === null) this.#stopIdle = startIdleSuspension(this.#ctx, this.#shutdown.signal);
    if (!this.#shutdown.signal.aborted && this.#stopPools === null) this.#stopPools = startWarmPools(this.#ctx);
  }

  /** A real action on a session suspended while idle: resume it (a resume already under way counts). */
  async #wake(id: string): Promise<void> {
    try {
      await this.resume(id);
    } catch (err) {
      if (err instanceof SessionStateError && err.state === 'ready') return; // woken by another action meanwhile
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#shutdown.abort(new Error('controller is shutting down'));
    await this.#heal.close();
    await this.#stopSweeps?.();
    await this.#stopIdle?.();
    await this.#stopPools?.();
    await Promise.allSettled([...this.#shells].map((s) => s.end()));
    this.#shells.clear();
    await Promise.allSettled([...this.#inflight.values()]);
    this.#ctx.live.closeAll();
    await followersSettled(this.#ctx.live);
    await Promise.allSettled([...this.#ctx.executors.values()].map((e) => e.close()));
    await this.#ctx.egressProxy?.close();
    await this.#ctx.store.close();
  }

  // ---- helpers --------------------------------------------------------------------------------

  #background(id: string, fn: () => Promise<void>): void {
    this.#track(id, fn().catch((err: unknown) => this.#ctx.log.error({ session: id, err: sanitize(errorMessage(err)) }, 'background launch failed')));
  }

  /** Records `p` as the session's work in flight until it settles (close() and waitUntilSettled() await it). */
  #track(id: string, p: Promise<void>): void {
    this.#inflight.set(id, p);
    void p.finally(() => {
      if (this.#inflight.get(id) === p) this.#inflight.delete(id);
    });
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('controller is closed');
  }
}

