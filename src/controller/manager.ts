/**
 * The session manager: implements SessionService over the inventory, the executors and the live
 * session map. Launches run in the background under a per-session lock; everything else is on
 * demand (idle sessions cost nothing: no polling).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { chunkBytes, isAgentctlHttpError, isAgentctlUnreachableError } from '../client/index.js';
import type { ExecutorConfig } from '../config/index.js';
import { renderAgentCommand } from '../config/index.js';
import { isProvisionalState, type SessionRecord } from '../inventory/index.js';
import { errorMessage } from '../shared/errors.js';
import { sanitize } from '../shared/sanitize.js';
import { diagnostic, secretIds, setSessionState, type ManagerContext } from './context.js';
import { reachedCheckpoint } from './hooks.js';
import { previousAgentProcessId, recordedAgentId, SessionLaunch, type LaunchMode } from './launch.js';
import type { LiveSession } from './live.js';
import { recoverSession } from './recover.js';
import { encodeRepoCredentials, repoCredentialId, sessionOfRepoCredential, splitRepositoryRef } from './repo-credentials.js';
import { newShellDir, PtyShell, resizeCommand, shellCommand, shellProcessId, type ShellPortMessage } from './shell.js';
import {
  LaunchValidationError,
  SessionNotFoundError,
  SessionStateError,
  type ExecOptions,
  type LaunchRequest,
  type OutputChunkView,
  type SessionEvent,
  type SessionService,
  type SessionView,
  type SessionWorkspace,
  type SessionWorkspaceService,
  type ShellOptions,
  type ShellSession,
} from './service.js';
import { ENV_NAME, validateRepositoryRef } from './validate.js';
import { toView } from './views.js';

const SETTLED = new Set(['ready', 'stopped', 'failed']);

export class SessionManager implements SessionService, SessionWorkspaceService {
  readonly #ctx: ManagerContext;
  /** In-flight background work per session (launch/resume), awaited by close() and waitUntilSettled(). */
  readonly #inflight = new Map<string, Promise<void>>();
  readonly #shutdown = new AbortController();
  /** Cancels the launch/resume in flight per session (a remove does not wait for a slow clone). */
  readonly #cancels = new Map<string, AbortController>();
  /** Open shells, killed by close(): a shell nobody can reach again must not outlive the controller. */
  readonly #shells = new Set<{ end(): Promise<void> }>();
  #closed = false;

  constructor(ctx: ManagerContext) {
    this.#ctx = ctx;
  }

  // ---- launch / resume ------------------------------------------------------------------------

  async launch(req: LaunchRequest): Promise<SessionView> {
    this.#assertOpen();
    const { config } = this.#ctx;
    // Credentials in the URL never reach the session row, the view or an event: they are split off here.
    const { repository, credentials } = splitRepositoryRef(validateRepositoryRef(req.repository));
    const agentName = req.agent ?? config.defaults.agent;
    const agent = config.agents[agentName];
    if (!agent) throw new LaunchValidationError('agent', `unknown agent '${agentName}' (configured: ${Object.keys(config.agents).join(', ')})`);
    const executorName = req.executor ?? config.defaults.executor;
    const { executor, profileEnv } = this.#resolveExecutor(executorName);
    for (const key of Object.keys(req.env ?? {})) {
      if (!ENV_NAME.test(key)) throw new LaunchValidationError(`env.${key}`, 'must be a valid environment variable name');
    }
    for (const name of req.secretEnv ?? []) {
      if (!ENV_NAME.test(name)) throw new LaunchValidationError(`secretEnv.${name}`, 'must be a valid environment variable name');
      if (this.#ctx.secretSource(name) === undefined) throw new LaunchValidationError(`secretEnv.${name}`, 'is not set in the controller environment');
    }
    const prompt = req.prompt ?? null;
    const id = `s-${randomBytes(5).toString('hex')}`;
    // Stored before the session row: a crash in between leaves an orphan the start-up sweep removes,
    // never a session that needs a credential which was not stored.
    if (credentials) this.#ctx.store.putSecret(repoCredentialId(id), encodeRepoCredentials(credentials));
    let record: SessionRecord;
    try {
      record = this.#ctx.store.insertSession({
        id,
        name: req.name ?? null,
        executor: executorName,
        agent: agentName,
        repository,
        request: {
          env: { ...(req.env ?? {}) },
          secretEnv: [...(req.secretEnv ?? [])],
          prompt,
          agentCommand: renderAgentCommand(agent, prompt ?? ''),
          agentEnv: { ...agent.env },
          profileEnv,
        },
        state: 'launching',
        error: null,
        stages: [],
        workspacePath: null,
      });
    } catch (err) {
      if (credentials) this.#ctx.store.deleteSecret(repoCredentialId(id));
      throw err;
    }
    this.#ctx.events.emit({ type: 'state', sessionId: record.id, state: 'launching', error: null, at: record.createdAt });
    reachedCheckpoint(this.#ctx.hooks, 'session_created', record.id);
    this.#background(record.id, () => this.#runLaunch(record.id, executor.name, { kind: 'fresh' }));
    return toView(record, undefined);
  }

  async resume(id: string): Promise<SessionView> {
    this.#assertOpen();
    this.#require(id);
    const current = this.#inflight.get(id);
    if (current) await current;
    const run = this.#ctx.locks.run(id, async () => {
      const session = this.#require(id);
      const live = this.#ctx.live.get(id);
      if (session.state === 'ready' && live && live.agentProcessId !== null && (await refreshAgent(live))) {
        const row = this.#ctx.store.getRuntime(id);
        if (live.agent?.status === 'exited' && row) {
          // The agent ran to its end (or died): start a new one in the same, connected workspace.
          await this.#cancellable(id, (signal) => new SessionLaunch(this.#ctx, session, { kind: 'revive', row }, row.executor, signal).restartAgent(live));
          return;
        }
        // A resume that queued behind another launch or resume got what it asked for.
        if (current) return;
        throw new SessionStateError(id, 'ready', 'resume', 'its agent is running', `session '${id}' is already ready (agent running); nothing to resume`);
      }
      if (session.state === 'removing') throw new SessionStateError(id, 'removing', 'resume', 'it is being removed');
      const executorName = this.#resolveExecutor(session.executor).executor.name;
      let row = this.#ctx.store.getRuntime(id);
      if (row && isProvisionalState(row.state)) {
        // a launch cut short that could not be rolled back yet: finish its cleanup first
        await recoverSession(this.#ctx, session, { force: true });
        row = this.#ctx.store.getRuntime(id);
      }
      const mode: LaunchMode = row && !isProvisionalState(row.state) ? { kind: 'revive', row } : { kind: 'fresh' };
      await this.#cancellable(id, (signal) => new SessionLaunch(this.#ctx, session, mode, executorName, signal).run());
    });
    const tracked = run.then(() => undefined, () => undefined);
    this.#inflight.set(id, tracked);
    void tracked.finally(() => {
      if (this.#inflight.get(id) === tracked) this.#inflight.delete(id);
    });
    await run;
    return this.get(id);
  }

  async #runLaunch(id: string, executorName: string, mode: LaunchMode): Promise<void> {
    await this.#ctx.locks.run(id, async () => {
      const session = this.#ctx.store.getSession(id);
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
    const records = this.#ctx.store.listSessions();
    // the agents' status is read fresh (in parallel, bounded), so an agent that exited shows as exited
    await Promise.all(records.map((r) => this.#ctx.live.get(r.id)).map((live) => (live?.agentProcessId ? refreshAgent(live) : undefined)));
    return records.map((r) => toView(r, this.#ctx.live.get(r.id)));
  }

  async get(id: string): Promise<SessionView> {
    const record = this.#require(id);
    const live = this.#ctx.live.get(id);
    if (live?.agentProcessId) await refreshAgent(live);
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
    this.#require(id);
    await this.#ctx.locks.run(id, async () => {
      const session = this.#require(id);
      if (session.state === 'removing') throw new SessionStateError(id, 'removing', 'stop', 'it is being removed');
      const row = this.#ctx.store.getRuntime(id);
      if (!row || row.state === 'stopped') {
        this.#ctx.live.take(id);
        if (session.state === 'ready' || session.state === 'stopping') setSessionState(this.#ctx, id, 'stopped', null);
        return;
      }
      const executor = this.#ctx.executors.get(row.executor);
      if (!executor) throw new SessionStateError(id, session.state as SessionView['state'], 'stop', `executor '${row.executor}' is not configured any more`);
      setSessionState(this.#ctx, id, 'stopping', session.error);
      const live = this.#ctx.live.take(id);
      try {
        await executor.stopInstance(
          { identity: identityOf(id, row.instanceId), metadata: row.metadata, ...(live ? { control: live.instance.control } : {}) },
          { destroy: false, reason: 'user_stop' },
        );
      } catch (err) {
        const message = sanitize(errorMessage(err));
        setSessionState(this.#ctx, id, 'failed', { message: `stop failed: ${message}`, stage: null });
        throw err;
      }
      this.#ctx.store.upsertRuntime({ ...row, state: 'stopped' });
      setSessionState(this.#ctx, id, 'stopped', null);
    });
    return this.get(id);
  }

  async remove(id: string, opts: { force?: boolean } = {}): Promise<void> {
    this.#require(id);
    // A launch in flight is cancelled (it rolls back what it created) rather than waited for.
    this.#cancels.get(id)?.abort(new Error(`session ${id} is being removed`));
    await this.#ctx.locks.run(id, async () => {
      const session = this.#require(id);
      const row = this.#ctx.store.getRuntime(id);
      setSessionState(this.#ctx, id, 'removing', session.error);
      const live = this.#ctx.live.take(id);
      try {
        const executor = this.#ctx.executors.get(row?.executor ?? this.#resolveExecutorName(session.executor));
        if (!executor) throw new Error(`executor '${row?.executor ?? session.executor}' is not configured any more`);
        if (row) {
          await executor.stopInstance(
            { identity: identityOf(id, row.instanceId), metadata: row.metadata, ...(live ? { control: live.instance.control } : {}) },
            { destroy: true, reason: 'session_removed' },
          );
          const ids = secretIds(row.instanceId);
          this.#ctx.store.deleteSecret(ids.authToken);
          this.#ctx.store.deleteSecret(ids.bootstrapNonce);
        } else {
          await executor.removeUnrecorded?.(id);
        }
      } catch (err) {
        const message = sanitize(errorMessage(err));
        if (!opts.force) {
          setSessionState(this.#ctx, id, 'failed', { message: `remove failed: ${message} (retry, or remove with force)`, stage: null });
          throw err;
        }
        this.#ctx.log.warn({ session: id, err: message }, 'forced remove: cleanup failed, forgetting the session anyway');
        diagnostic(this.#ctx, id, 'CleanupFailed', message);
      }
      this.#ctx.store.deleteSecret(repoCredentialId(id));
      this.#ctx.store.deleteSession(id);
      diagnostic(this.#ctx, id, 'Removed', `session ${id} removed`);
      this.#ctx.events.forget(id);
    });
  }

  // ---- in the workspace -----------------------------------------------------------------------

  async exec(id: string, argv: string[], opts: ExecOptions = {}): Promise<{ exitCode: number | null; signal: string | null }> {
    if (argv.length === 0) throw new LaunchValidationError('argv', 'must not be empty');
    let started: { live: LiveSession; value: { id: string } };
    try {
      started = await this.#withLive(id, 'exec in', (l) =>
        l.instance.client.startProcess({
          command: argv,
          kind: 'process',
          ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
          ...(opts.env !== undefined ? { env: opts.env } : {}),
        }),
      );
    } catch (err) {
      // A command that cannot be started ends as a shell would report it: 127 (not found) or 126.
      const unstartable = isAgentctlHttpError(err) && err.status === 400 ? /^cannot start .*: (ENOENT|EACCES)$/.exec(err.serverMessage)?.[1] : undefined;
      if (unstartable === undefined) throw err;
      const why = unstartable === 'ENOENT' ? 'command not found' : 'permission denied';
      opts.onOutput?.({ seq: 0, stream: 'stderr', data: new TextEncoder().encode(`berth: exec: ${argv[0] ?? ''}: ${why}\n`) });
      return { exitCode: unstartable === 'ENOENT' ? 127 : 126, signal: null };
    }
    const { live, value: proc } = started;
    const client = live.instance.client;
    try {
      await client.writeStdin(proc.id, opts.stdin ?? '', { eof: true });
    } catch {
      // the process may already have exited (or closed stdin); its output and exit code still count
    }
    const signal = anySignal([opts.signal, live.abort.signal]);
    const onAbort = () => void client.signal(proc.id, 'SIGTERM').catch(() => undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const msg of client.streamOutput(proc.id, { signal })) {
        if (msg.type === 'output') opts.onOutput?.(toChunk(msg.chunk));
        else if (msg.type === 'exit') return { exitCode: msg.exit_code, signal: msg.signal };
      }
      signal.throwIfAborted();
      const info = await client.getProcess(proc.id);
      return { exitCode: info.exit_code, signal: info.signal };
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async openShell(id: string, opts: ShellOptions): Promise<ShellSession> {
    if (opts.argv !== undefined && opts.argv.length === 0) throw new LaunchValidationError('argv', 'must not be empty');
    const dir = newShellDir();
    const { live, value: proc } = await this.#withLive(id, 'open a shell in', (l) =>
      l.instance.client.startProcess({
        id: shellProcessId(this.#ctx.runId),
        command: shellCommand(dir, opts.rows, opts.cols, opts.argv),
        kind: 'process',
        ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
        env: { TERM: opts.term ?? 'xterm-256color', ...opts.env },
      }),
    );
    const client = live.instance.client;
    // from 0: output the wrapper wrote before the socket opened is replayed, not lost.
    const attachment = client.attach(proc.id, { from: 0, signal: anySignal([opts.signal, live.abort.signal]) });
    async function* messages(): AsyncGenerator<ShellPortMessage, void, undefined> {
      for await (const msg of attachment) {
        if (msg.type === 'output') yield { type: 'output', chunk: toChunk(msg.chunk) };
        else if (msg.type === 'exit') yield { type: 'exit', exitCode: msg.exit_code, signal: msg.signal };
        // `gap` cannot happen from 0 within the retention cap of a terminal; `error` answers
        // input after the shell closed its stdin, which a terminal drops as well.
      }
    }
    const shell = new PtyShell({
      messages: messages(),
      write: (data) => void attachment.write(data),
      signal: (signal) => {
        if (!attachment.kill(signal)) void client.signal(proc.id, signal).catch(() => undefined);
      },
      resize: async (rows, cols) => {
        await this.exec(id, resizeCommand(dir, rows, cols));
      },
    });
    opts.signal?.addEventListener('abort', () => shell.close(), { once: true });
    const tracked = { end: () => client.signal(proc.id, 'SIGKILL', { timeoutMs: 2000 }).catch(() => undefined) };
    this.#shells.add(tracked);
    // Only a real exit untracks it: an iteration that ended without one (socket gone) may leave it running.
    void shell.exit.then(() => this.#shells.delete(tracked), () => undefined);
    return shell;
  }

  async *logs(id: string, opts: { from?: number; follow?: boolean; previous?: boolean; signal?: AbortSignal }): AsyncIterable<OutputChunkView> {
    const record = this.#require(id);
    if ((record.state === 'stopped' || record.state === 'failed') && !this.#ctx.live.get(id)) {
      const recorded = await this.#recordedLogs(id, opts);
      if (recorded !== null) {
        yield* recorded;
        return;
      }
    }
    if (opts.previous) {
      yield* await this.#previousLiveLogs(id, opts);
      return;
    }
    // the first read doubles as a liveness check: a dead agentctl is revived once, then read again
    const { live, value: first } = await this.#withLive(id, 'read the logs of', (l) =>
      l.agentProcessId === null
        ? Promise.resolve(null)
        : l.instance.client.readAllOutput(l.agentProcessId, { from: opts.from ?? 0, ...(opts.signal ? { signal: opts.signal } : {}) }),
    );
    const agentId = live.agentProcessId;
    if (agentId === null || first === null) return;
    const client = live.instance.client;
    if (!opts.follow) {
      for (const chunk of first.chunks) yield toChunk(chunk);
      return;
    }
    const signal = anySignal([opts.signal, live.abort.signal]);
    for await (const msg of client.streamOutput(agentId, { from: opts.from ?? 0, signal })) {
      if (msg.type === 'output') yield toChunk(msg.chunk);
      else if (msg.type === 'exit') return;
    }
  }

  /**
   * `logs` of a stopped (or failed) session: what its last (or, with `previous`, the one before)
   * agent run left on disk, when the executor can read it without agentctl (local). Null when it
   * cannot: the caller then refuses as for any other state conflict. A finished run has nothing
   * more to follow, so `follow` ends after the recorded output.
   */
  async #recordedLogs(id: string, opts: { from?: number; previous?: boolean }): Promise<OutputChunkView[] | null> {
    const row = this.#ctx.store.getRuntime(id);
    const executor = row ? this.#ctx.executors.get(row.executor) : undefined;
    if (!row || !executor?.readRecordedOutput) return null;
    const last = recordedAgentId(row.metadata) ?? null;
    const processId = opts.previous ? this.#previousAgentId(id, last) : last;
    if (processId === null) return [];
    const target = { identity: identityOf(id, row.instanceId), metadata: row.metadata };
    const chunks = await executor.readRecordedOutput(target, processId, opts.from ?? 0);
    if (chunks === null && opts.previous) throw this.#noPreviousRun(id, last);
    return (chunks ?? []).map((c) => ({ seq: c.seq, stream: c.stream, data: c.data }));
  }

  /** `logs --previous` of a ready session: the earlier agent run, which agentctl still serves (exited or orphaned). */
  async #previousLiveLogs(id: string, opts: { from?: number; signal?: AbortSignal }): Promise<OutputChunkView[]> {
    const { value } = await this.#withLive(id, 'read the logs of', async (l) => {
      const processId = this.#previousAgentId(id, l.agentProcessId);
      try {
        return await l.instance.client.readAllOutput(processId, { from: opts.from ?? 0, ...(opts.signal ? { signal: opts.signal } : {}) });
      } catch (err) {
        if (isAgentctlHttpError(err) && err.status === 404) throw this.#noPreviousRun(id, l.agentProcessId);
        throw err;
      }
    });
    return value.chunks.map(toChunk);
  }

  /** `agent-(N-1)` for the current `agent-N`; throws when there is no earlier run. */
  #previousAgentId(id: string, current: string | null): string {
    const previous = current === null ? null : previousAgentProcessId(current);
    if (previous === null) throw this.#noPreviousRun(id, current);
    return previous;
  }

  #noPreviousRun(id: string, current: string | null): SessionStateError {
    const state = toView(this.#require(id), this.#ctx.live.get(id)).state;
    const which = current === null ? 'its agent has not run yet' : `'${current}' is its first agent run`;
    return new SessionStateError(id, state, 'read the previous logs of', which, `session '${id}' has no previous agent run: ${which}`);
  }

  async sendInput(id: string, data: string | Uint8Array, opts: { eof?: boolean } = {}): Promise<void> {
    await this.#withLive(id, 'send input to', (live) => {
      if (live.agentProcessId === null) throw new SessionStateError(id, 'ready', 'send input to', 'its agent is not running');
      return live.instance.client.writeStdin(live.agentProcessId, data, { eof: opts.eof ?? false });
    });
  }

  async workspace(id: string): Promise<SessionWorkspace> {
    const { live } = await this.#withLive(id, 'open the workspace of', (l) => l.instance.client.health());
    return { files: live.instance.client.files, git: live.instance.client.git };
  }

  subscribe(listener: (event: SessionEvent) => void, filter?: { sessionId?: string }): () => void {
    return this.#ctx.events.subscribe(listener, filter);
  }

  // ---- life cycle -----------------------------------------------------------------------------

  /** Reconnects ready sessions and cleans up launches cut short by a restart (call once at start-up). */
  async recover(): Promise<void> {
    const sessions = this.#ctx.store.listSessions();
    await Promise.all(
      sessions.map((s) =>
        this.#ctx.locks
          .run(s.id, () => recoverSession(this.#ctx, s, { force: false }))
          .catch((err: unknown) => this.#ctx.log.error({ session: s.id, err: sanitize(errorMessage(err)) }, 'recovery failed')),
      ),
    );
    this.#sweepOrphanSecrets();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#shutdown.abort(new Error('controller is shutting down'));
    await Promise.allSettled([...this.#shells].map((s) => s.end()));
    this.#shells.clear();
    await Promise.allSettled([...this.#inflight.values()]);
    this.#ctx.live.closeAll();
    await Promise.allSettled([...this.#ctx.executors.values()].map((e) => e.close()));
    this.#ctx.store.close();
  }

  // ---- helpers --------------------------------------------------------------------------------

  #background(id: string, fn: () => Promise<void>): void {
    const p = fn().catch((err: unknown) => this.#ctx.log.error({ session: id, err: sanitize(errorMessage(err)) }, 'background launch failed'));
    this.#inflight.set(id, p);
    void p.finally(() => {
      if (this.#inflight.get(id) === p) this.#inflight.delete(id);
    });
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('controller is closed');
  }

  #require(id: string): SessionRecord {
    const record = this.#ctx.store.getSession(id);
    if (!record) throw new SessionNotFoundError(id);
    return record;
  }

  #requireLive(id: string, action: string): LiveSession {
    const record = this.#require(id);
    const live = this.#ctx.live.get(id);
    if (record.state !== 'ready' || !live) {
      const hint =
        record.state === 'launching'
          ? 'wait until it is ready'
          : record.state === 'stopped' || record.state === 'failed'
            ? `resume it first (berth resume ${id})`
            : 'try again later';
      throw new SessionStateError(id, toView(record, undefined).state, action, hint);
    }
    return live;
  }

  /**
   * Runs `fn` against the live instance. When agentctl turns out to be unreachable (it died, or the
   * machine slept), the session is revived once under its lock (refresh: same instance id, recorded
   * nonce; the agent is restarted only if it is not running) and `fn` runs again.
   */
  async #withLive<T>(id: string, action: string, fn: (live: LiveSession) => Promise<T>): Promise<{ live: LiveSession; value: T }> {
    const live = this.#requireLive(id, action);
    try {
      return { live, value: await fn(live) };
    } catch (err) {
      if (!isAgentctlUnreachableError(err)) throw err;
      diagnostic(this.#ctx, id, 'Reconnecting', 'agentctl is unreachable; reconnecting');
      await this.#ctx.locks.run(id, async () => {
        if (this.#ctx.live.get(id) !== live) return; // someone else already reconnected
        const session = this.#require(id);
        const row = this.#ctx.store.getRuntime(id);
        if (!row || row.state !== 'ready') return;
        this.#ctx.live.take(id);
        await new SessionLaunch(this.#ctx, session, { kind: 'revive', row }, row.executor, this.#shutdown.signal).run();
      });
      const again = this.#requireLive(id, action);
      return { live: again, value: await fn(again) };
    }
  }

  #resolveExecutorName(name: string): string {
    return this.#ctx.config.profiles[name]?.executor ?? name;
  }

  #resolveExecutor(name: string): { executor: ExecutorConfig; profileEnv: Record<string, string> } {
    const { config } = this.#ctx;
    const profile = config.profiles[name];
    const executorName = profile?.executor ?? name;
    const executor = config.executors[executorName];
    if (!executor) {
      const known = [...Object.keys(config.executors), ...Object.keys(config.profiles)].join(', ');
      throw new LaunchValidationError('executor', `unknown executor or profile '${name}' (configured: ${known})`);
    }
    if (executor.type === 'kubernetes') {
      throw new LaunchValidationError('executor', `executor '${executorName}' is of type kubernetes, which is not implemented yet; use a local executor`);
    }
    if (!this.#ctx.executors.has(executorName)) throw new LaunchValidationError('executor', `executor '${executorName}' is not available`);
    return { executor, profileEnv: { ...(profile?.env ?? {}) } };
  }

  /**
   * Secrets of instances no runtime row references (a crash between storing and recording them),
   * and repository credentials of sessions that do not exist (a crash before the session row).
   */
  #sweepOrphanSecrets(): void {
    const sessions = new Set(this.#ctx.store.listSessions().map((s) => s.id));
    const referenced = new Set<string>();
    for (const row of this.#ctx.store.listRuntime()) {
      for (const id of Object.values(row.secretRefs)) referenced.add(id);
      const ids = secretIds(row.instanceId);
      referenced.add(ids.authToken);
      referenced.add(ids.bootstrapNonce);
    }
    for (const id of this.#ctx.store.listSecretIds()) {
      if (id.startsWith('agentctl-') && !referenced.has(id)) this.#ctx.store.deleteSecret(id);
      const owner = sessionOfRepoCredential(id);
      if (owner !== null && !sessions.has(owner)) this.#ctx.store.deleteSecret(id);
    }
  }
}

function identityOf(sessionId: string, instanceId: string) {
  return { instanceId, sessionId, taskId: sessionId, environmentId: sessionId };
}

function toChunk(chunk: { seq: number; stream: 'stdout' | 'stderr'; data: string; at: string }): OutputChunkView {
  return { seq: chunk.seq, stream: chunk.stream, data: chunkBytes(chunk) };
}

/** Reads the agent's current status into `live`; false when agentctl could not be asked. */
async function refreshAgent(live: LiveSession): Promise<boolean> {
  if (live.agentProcessId === null) return false;
  try {
    const info = await live.instance.client.getProcess(live.agentProcessId, { timeoutMs: 1500, signal: AbortSignal.timeout(2000) });
    live.agent = { id: info.id, status: info.status, exitCode: info.exit_code };
    return true;
  } catch {
    // unreachable right now: keep the last known state
    return false;
  }
}

function anySignal(signals: (AbortSignal | undefined)[]): AbortSignal {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  return present.length === 1 ? (present[0] as AbortSignal) : AbortSignal.any(present);
}

function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e as Error);
      },
    );
  });
}
