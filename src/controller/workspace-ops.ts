/**
 * What a person does inside a ready session — run a command, open a shell, read or follow the
 * agent's output (also of a stopped session: read by the executor, or from the copy mirrored when
 * it stopped), send the agent input, browse files and git — each through the live instance
 * (re-attached once if it dropped).
 * @module
 */
import { chunkBytes, isAgentctlHttpError, isAgentctlUnreachableError } from '../agentctl-client/index.js';
import type { OutputChunk } from '../protocol/index.js';
import { previousAgentProcessId, recordedAgentId } from './agent.js';
import type { ManagerContext } from './context.js';
import { sessionIdentity } from '../executors/launch-kit/index.js';
import type { LiveAccess } from './live-access.js';
import type { LiveSession } from './live.js';
import { newShellDir, PtyShell, resizeCommand, shellCommand, shellProcessId, type ShellPortMessage } from './shell.js';
import { spawnFailure } from './spawn-failure.js';
import { LaunchValidationError, SessionStateError, type ExecOptions, type OutputChunkView, type SessionWorkspace, type ShellOptions, type ShellSession } from './service.js';
import { toView } from './views.js';

/** Re-dial budget of an exec's output stream (about a second in all). */
const EXEC_RECONNECT = { attempts: 4, initialDelayMs: 100, maxDelayMs: 400 };
/** Re-attaches in a row without new output before a follow gives up (each one re-dials through a refresh). */
const FOLLOW_REATTACHES = 3;
/** exec, a shell and input are real actions: a session suspended while idle wakes for them (reads never wake it). */
const WAKE = { wake: true } as const;

export class WorkspaceOps {
  readonly #ctx: ManagerContext;
  readonly #access: LiveAccess;
  /** Open shells, killed by the manager's close(): a shell nobody can reach again must not outlive the controller. */
  readonly #shells: Set<{ end(): Promise<void> }>;

  constructor(ctx: ManagerContext, access: LiveAccess, shells: Set<{ end(): Promise<void> }>) {
    this.#ctx = ctx;
    this.#access = access;
    this.#shells = shells;
  }

  async exec(id: string, argv: string[], opts: ExecOptions = {}): Promise<{ exitCode: number | null; signal: string | null }> {
    if (argv.length === 0) throw new LaunchValidationError('argv', 'must not be empty');
    let started: { live: LiveSession; value: { id: string } };
    try {
      started = await this.#access.withLive(id, 'exec in', (l) =>
        l.instance.client.startProcess({
          command: argv,
          kind: 'process',
          ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
          ...(opts.env !== undefined ? { env: opts.env } : {}),
        }),
        WAKE,
      );
    } catch (err) {
      // A command that cannot be started ends as a shell would report it: 127 (not found) or 126.
      const failed = spawnFailure(err);
      if (failed === undefined) throw err;
      await opts.onOutput?.({ seq: 0, stream: 'stderr', data: new TextEncoder().encode(`berth: exec: ${argv[0] ?? ''}: ${failed.reason}\n`) });
      return { exitCode: failed.exitCode, signal: null };
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
      // A short re-dial budget: a dropped connection or forward comes back within it, a dead
      // agentctl does not — the caller hears so in about a second, not after the default ~10 s.
      for await (const msg of client.streamOutput(proc.id, { signal, reconnect: EXEC_RECONNECT })) {
        if (msg.type === 'output') await opts.onOutput?.(toChunk(msg.chunk));
        else if (msg.type === 'exit') return { exitCode: msg.exit_code, signal: msg.signal };
      }
      signal.throwIfAborted();
      const info = await client.getProcess(proc.id);
      return { exitCode: info.exit_code, signal: info.signal };
    } catch (err) {
      if (!isAgentctlUnreachableError(err)) throw err;
      await this.#access.refreshAgent(id, live);
      throw new SessionStateError(
        id,
        'ready',
        'exec in',
        'its agentctl stopped while the command ran',
        `session '${id}': agentctl stopped while \`${argv[0] ?? ''}\` ran, so its exit status is unknown (${live.agent?.status === 'lost' ? 'the agent is lost too; ' : ''}the next command re-attaches; check with berth status ${id})`,
      );
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async openShell(id: string, opts: ShellOptions): Promise<ShellSession> {
    if (opts.argv !== undefined && opts.argv.length === 0) throw new LaunchValidationError('argv', 'must not be empty');
    const dir = newShellDir();
    const { live, value: proc } = await this.#access.withLive(id, 'open a shell in', (l) =>
      l.instance.client.startProcess({
        id: shellProcessId(this.#ctx.runId),
        command: shellCommand(dir, opts.rows, opts.cols, opts.argv),
        kind: 'process',
        ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
        env: { TERM: opts.term ?? 'xterm-256color', ...opts.env },
      }),
      WAKE,
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
    const record = await this.#access.require(id);
    if ((record.state === 'stopped' || record.state === 'suspended' || record.state === 'failed') && !this.#ctx.live.get(id)) {
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
    // the first read doubles as a liveness check: a dead agentctl is revived once, then read again.
    // A follower streams everything itself: one chunk is check enough, not a copy of all retained output.
    const { live, value: first } = await this.#access.withLive(id, 'read the logs of', (l): Promise<{ chunks: OutputChunk[] } | null> => {
      if (l.agentProcessId === null) return Promise.resolve(null);
      const read = { from: opts.from ?? 0, ...(opts.signal ? { signal: opts.signal } : {}) };
      return opts.follow ? l.instance.client.readOutput(l.agentProcessId, { ...read, limit: 1 }) : l.instance.client.readAllOutput(l.agentProcessId, read);
    });
    const agentId = live.agentProcessId;
    if (agentId === null || first === null) return;
    if (!opts.follow) {
      for (const chunk of first.chunks) yield toChunk(chunk);
      return;
    }
    yield* this.#follow(id, live, agentId, opts.from ?? 0, opts.signal);
  }

  /**
   * Follows one agent run until it exits, across re-attaches: when the live instance is replaced
   * under the follower (a refresh after a dropped forward or an agentctl restart) or its stream gives
   * up, the session is re-attached and the stream picks up at the next sequence number — nothing
   * repeated, nothing skipped. A new agent run (a replacement Pod started the agent again) ends the
   * follow: its sequence numbers start over, and `logs -f` follows the run it began on.
   */
  async *#follow(id: string, first: LiveSession, agentId: string, from: number, caller: AbortSignal | undefined): AsyncIterable<OutputChunkView> {
    let live = first;
    let next = from;
    for (let fruitless = 0; ; ) {
      const before = next;
      let failure: unknown = null;
      try {
        for await (const msg of live.instance.client.streamOutput(agentId, { from: next, signal: anySignal([caller, live.abort.signal]) })) {
          if (msg.type === 'exit') return;
          if (msg.type === 'output') {
            next = msg.chunk.seq + 1;
            yield toChunk(msg.chunk);
          }
        }
      } catch (err) {
        failure = err;
      }
      if (caller?.aborted) return;
      fruitless = next > before ? 0 : fruitless + 1;
      if (fruitless > FOLLOW_REATTACHES) {
        if (failure !== null) throw failure;
        return;
      }
      // the session stopped or went away under the follower: the follow ends there, quietly
      if ((await this.#ctx.store.getRuntime(id))?.state !== 'ready') return;
      let again: LiveSession;
      try {
        ({ live: again } = await this.#access.withLive(id, 'follow the logs of', (l) => l.instance.client.health(caller ? { signal: caller } : {})));
      } catch (err) {
        if (caller?.aborted || err instanceof SessionStateError) return;
        throw err;
      }
      if (again.agentProcessId !== agentId) return;
      live = again;
    }
  }


  /**
   * `logs` of a stopped, suspended (or failed) session: what its last (or, with `previous`, the one
   * before) agent run left on disk, when the executor can read it without agentctl (local), else
   * the copy mirrored to the inventory when it stopped (Kubernetes: the last MiB of the two latest
   * runs; output-mirror.ts). Null when neither has it: the caller then refuses as for any other
   * state conflict (never waking the session). A finished run has nothing more to follow, so
   * `follow` ends after the recorded output.
   */
  async #recordedLogs(id: string, opts: { from?: number; previous?: boolean }): Promise<OutputChunkView[] | null> {
    const row = await this.#ctx.store.getRuntime(id);
    if (!row) return null;
    const executor = this.#ctx.executors.get(row.executor);
    const last = recordedAgentId(row.metadata) ?? null;
    if (!executor?.readRecordedOutput) {
      if (last === null) return null;
      const processId = opts.previous ? await this.#previousAgentId(id, last) : last;
      return this.#ctx.store.readRecordedOutput(id, processId, opts.from ?? 0);
    }
    const processId = opts.previous ? await this.#previousAgentId(id, last) : last;
    if (processId === null) return [];
    const target = { identity: sessionIdentity(id, row.instanceId), metadata: row.metadata };
    const chunks = await executor.readRecordedOutput(target, processId, opts.from ?? 0);
    if (chunks === null && opts.previous) throw await this.#noPreviousRun(id, last);
    return (chunks ?? []).map((c) => ({ seq: c.seq, stream: c.stream, data: c.data }));
  }

  /** `logs --previous` of a ready session: the earlier agent run, which agentctl still serves (exited or orphaned). */
  async #previousLiveLogs(id: string, opts: { from?: number; signal?: AbortSignal }): Promise<OutputChunkView[]> {
    const { value } = await this.#access.withLive(id, 'read the logs of', async (l) => {
      const processId = await this.#previousAgentId(id, l.agentProcessId);
      try {
        return await l.instance.client.readAllOutput(processId, { from: opts.from ?? 0, ...(opts.signal ? { signal: opts.signal } : {}) });
      } catch (err) {
        if (isAgentctlHttpError(err) && err.status === 404) throw await this.#noPreviousRun(id, l.agentProcessId);
        throw err;
      }
    });
    return value.chunks.map(toChunk);
  }

  /** `agent-(N-1)` for the current `agent-N`; throws when there is no earlier run. */
  async #previousAgentId(id: string, current: string | null): Promise<string> {
    const previous = current === null ? null : previousAgentProcessId(current);
    if (previous === null) throw await this.#noPreviousRun(id, current);
    return previous;
  }

  async #noPreviousRun(id: string, current: string | null): Promise<SessionStateError> {
    const state = toView(await this.#access.require(id), this.#ctx.live.get(id)).state;
    const which = current === null ? 'its agent has not run yet' : `'${current}' is its first agent run`;
    return new SessionStateError(id, state, 'read the previous logs of', which, `session '${id}' has no previous agent run: ${which}`);
  }

  async sendInput(id: string, data: string | Uint8Array, opts: { eof?: boolean } = {}): Promise<void> {
    await this.#access.withLive(
      id,
      'send input to',
      (live) => {
        if (live.agentProcessId === null) throw new SessionStateError(id, 'ready', 'send input to', 'its agent is not running');
        return live.instance.client.writeStdin(live.agentProcessId, data, { eof: opts.eof ?? false });
      },
      WAKE,
    );
  }

  async workspace(id: string): Promise<SessionWorkspace> {
    const { live } = await this.#access.withLive(id, 'open the workspace of', (l) => l.instance.client.health());
    return { files: live.instance.client.files, git: live.instance.client.git };
  }
}

function toChunk(chunk: { seq: number; stream: 'stdout' | 'stderr'; data: string; at: string }): OutputChunkView {
  return { seq: chunk.seq, stream: chunk.stream, data: chunkBytes(chunk) };
}

function anySignal(signals: (AbortSignal | undefined)[]): AbortSignal {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  return present.length === 1 ? (present[0] as AbortSignal) : AbortSignal.any(present);
}

