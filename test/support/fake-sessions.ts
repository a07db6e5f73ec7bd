/**
 * An in-memory SessionService for API and CLI tests: launches walk through scripted stages on
 * short timers, the "agent" prints a line per tick, and exec runs real commands (child_process)
 * in a temp directory standing in for the workspace — so exit codes, stdin and shells (the real
 * PTY wrapper of src/controller/shell.ts, run locally) behave for real.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newShellDir, PtyShell, resizeCommand, shellCommand, type ShellPortMessage } from '../../src/controller/shell.js';
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
  type ShellOptions,
  type ShellSession,
  type StageRecord,
} from '../../src/controller/service.js';

export interface FakeSessionsOptions {
  /** Delay of each stage, in ms. @default 20 */
  stageMs?: number;
  /** Interval of the agent's output lines, in ms. @default 50 */
  agentTickMs?: number;
  /** Lines the agent prints before exiting. @default 20 */
  agentLines?: number;
  /**
   * Keep `agentctl_start` waiting until someone subscribes to the session's events, so a test
   * of launch progress sees the waiting stage regardless of timing. @default false
   */
  waitForWatcher?: boolean;
}

interface FakeSession {
  view: SessionView;
  chunks: OutputChunkView[];
  timers: Set<NodeJS.Timeout>;
  agentRunning: boolean;
  wakers: Set<() => void>;
}

const STAGES = ['workspace', 'agentctl_start', 'agentctl_connect', 'agent_start'] as const;

export class FakeSessions implements SessionService {
  readonly calls: { method: string; id?: string; argv?: string[] }[] = [];
  readonly #sessions = new Map<string, FakeSession>();
  readonly #listeners = new Set<{ fn: (e: SessionEvent) => void; sessionId?: string }>();
  readonly #root = mkdtempSync(join(tmpdir(), 'berth-fake-'));
  readonly #children = new Set<ChildProcess>();
  readonly #stageMs: number;
  readonly #tickMs: number;
  readonly #lines: number;
  readonly #waitForWatcher: boolean;
  #next = 1;

  constructor(opts: FakeSessionsOptions = {}) {
    this.#stageMs = opts.stageMs ?? 20;
    this.#tickMs = opts.agentTickMs ?? 50;
    this.#lines = opts.agentLines ?? 20;
    this.#waitForWatcher = opts.waitForWatcher ?? false;
  }

  async launch(req: LaunchRequest): Promise<SessionView> {
    this.calls.push({ method: 'launch' });
    if (!req.repository?.url && !req.repository?.path) throw new LaunchValidationError('repository', 'must set url or path');
    if (req.agent !== undefined && !['demo', 'fail'].includes(req.agent)) {
      throw new LaunchValidationError('agent', `unknown agent profile '${req.agent}' (known: demo)`);
    }
    const id = `s${String(this.#next++).padStart(4, '0')}`;
    const now = new Date().toISOString();
    const workspacePath = join(this.#root, id);
    const s: FakeSession = {
      view: {
        id,
        name: req.name ?? null,
        executor: req.executor ?? 'local',
        agent: req.agent ?? 'demo',
        repository: { ...req.repository },
        state: 'launching',
        createdAt: now,
        updatedAt: now,
        stages: [],
        workspacePath,
        error: null,
        agentProcess: null,
      },
      chunks: [],
      timers: new Set(),
      agentRunning: false,
      wakers: new Set(),
    };
    this.#sessions.set(id, s);
    this.#runStages(s);
    return structuredClone(s.view);
  }

  async list(): Promise<SessionView[]> {
    return [...this.#sessions.values()].map((s) => structuredClone(s.view));
  }

  async get(id: string): Promise<SessionView> {
    return structuredClone(this.#get(id).view);
  }

  async stop(id: string): Promise<SessionView> {
    this.calls.push({ method: 'stop', id });
    const s = this.#get(id);
    if (s.view.state === 'stopped') return structuredClone(s.view);
    this.#clearTimers(s);
    this.#stopAgent(s);
    this.#setState(s, 'stopped');
    return structuredClone(s.view);
  }

  async resume(id: string): Promise<SessionView> {
    this.calls.push({ method: 'resume', id });
    const s = this.#get(id);
    if (s.view.state !== 'stopped' && s.view.state !== 'failed') {
      throw new SessionStateError(id, s.view.state, 'resume', 'only a stopped or failed session can be resumed');
    }
    s.view.stages = [];
    s.view.error = null;
    this.#setState(s, 'launching');
    this.#runStages(s);
    return structuredClone(s.view);
  }

  async remove(id: string, _opts?: { force?: boolean }): Promise<void> {
    this.calls.push({ method: 'remove', id });
    const s = this.#get(id);
    this.#clearTimers(s);
    this.#stopAgent(s);
    rmSync(s.view.workspacePath ?? '', { recursive: true, force: true });
    this.#sessions.delete(id);
  }

  async exec(id: string, argv: string[], opts: ExecOptions = {}): Promise<{ exitCode: number | null; signal: string | null }> {
    this.calls.push({ method: 'exec', id, argv });
    const s = this.#get(id);
    if (s.view.state !== 'ready') throw new SessionStateError(id, s.view.state, 'exec in', 'resume it first: berth resume ' + id);
    const [cmd, ...args] = argv;
    const child = spawn(cmd ?? 'true', args, {
      cwd: join(s.view.workspacePath ?? this.#root, opts.cwd ?? ''),
      env: { ...process.env, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.#children.add(child);
    child.once('exit', () => this.#children.delete(child));
    let seq = 0;
    const emit = (stream: 'stdout' | 'stderr') => (data: Buffer) => opts.onOutput?.({ seq: seq++, stream, data: new Uint8Array(data) });
    child.stdout.on('data', emit('stdout'));
    child.stderr.on('data', emit('stderr'));
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.stdin ?? '');
    const onAbort = (): void => {
      child.kill('SIGKILL');
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, signal) => {
        opts.signal?.removeEventListener('abort', onAbort);
        resolve({ exitCode: code, signal });
      });
    });
  }

  async openShell(id: string, opts: ShellOptions): Promise<ShellSession> {
    this.calls.push({ method: 'openShell', id });
    const s = this.#get(id);
    if (s.view.state !== 'ready') throw new SessionStateError(id, s.view.state, 'open a shell in', 'resume it first: berth resume ' + id);
    const dir = newShellDir();
    const cwd = join(s.view.workspacePath ?? this.#root, opts.cwd ?? '');
    const [file, ...args] = shellCommand(dir, opts.rows, opts.cols, opts.argv);
    const child = spawn(file ?? 'sh', args, {
      cwd,
      env: { ...process.env, TERM: opts.term ?? 'xterm-256color', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true, // own process group, as under agentctl
    });
    this.#children.add(child);
    child.once('exit', () => this.#children.delete(child));
    child.stdin.on('error', () => undefined);
    const queue = new AsyncQueue<ShellPortMessage>();
    let seq = 0;
    const emit = (stream: 'stdout' | 'stderr') => (data: Buffer) => queue.push({ type: 'output', chunk: { seq: seq++, stream, data: new Uint8Array(data) } });
    child.stdout.on('data', emit('stdout'));
    child.stderr.on('data', emit('stderr'));
    child.once('error', (err) => queue.fail(err));
    child.once('close', (code, signal) => {
      queue.push({ type: 'exit', exitCode: code, signal });
      queue.end();
    });
    const shell = new PtyShell({
      messages: queue,
      write: (data) => void child.stdin.write(data),
      signal: (signal) => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, signal);
        } catch {
          // already gone
        }
      },
      resize: (rows, cols) =>
        new Promise<void>((resolve) => {
          const [cmd, ...rest] = resizeCommand(dir, rows, cols);
          spawn(cmd ?? 'sh', rest, { stdio: 'ignore' }).once('close', () => resolve()).once('error', () => resolve());
        }),
    });
    opts.signal?.addEventListener('abort', () => shell.close(), { once: true });
    return shell;
  }

  async *logs(id: string, opts: { from?: number; follow?: boolean; signal?: AbortSignal }): AsyncIterable<OutputChunkView> {
    const s = this.#get(id);
    let next = opts.from ?? 0;
    for (;;) {
      while (next < s.chunks.length) {
        const chunk = s.chunks[next++];
        if (chunk) yield chunk;
      }
      if (!opts.follow || !s.agentRunning || opts.signal?.aborted) return;
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          s.wakers.delete(wake);
          opts.signal?.removeEventListener('abort', wake);
          resolve();
        };
        s.wakers.add(wake);
        opts.signal?.addEventListener('abort', wake, { once: true });
      });
    }
  }

  subscribe(listener: (event: SessionEvent) => void, filter?: { sessionId?: string }): () => void {
    const entry = { fn: listener, ...(filter?.sessionId !== undefined ? { sessionId: filter.sessionId } : {}) };
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }

  async close(): Promise<void> {
    for (const child of this.#children) {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL'); // not a group leader (exec children)
      }
    }
    for (const s of this.#sessions.values()) {
      this.#clearTimers(s);
      this.#stopAgent(s);
    }
    rmSync(this.#root, { recursive: true, force: true });
  }

  #get(id: string): FakeSession {
    const s = this.#sessions.get(id);
    if (!s) throw new SessionNotFoundError(id);
    return s;
  }

  #emit(e: SessionEvent): void {
    for (const l of this.#listeners) if (l.sessionId === undefined || l.sessionId === e.sessionId) l.fn(e);
  }

  #setState(s: FakeSession, state: SessionView['state']): void {
    s.view.state = state;
    s.view.updatedAt = new Date().toISOString();
    this.#emit({ type: 'state', sessionId: s.view.id, state, error: s.view.error, at: s.view.updatedAt });
  }

  #stage(s: FakeSession, stage: StageRecord): void {
    const i = s.view.stages.findIndex((x) => x.name === stage.name);
    if (i >= 0) s.view.stages[i] = stage;
    else s.view.stages.push(stage);
    this.#emit({ type: 'stage', sessionId: s.view.id, stage: { ...stage }, at: new Date().toISOString() });
  }

  #later(s: FakeSession, ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      s.timers.delete(t);
      fn();
    }, ms);
    s.timers.add(t);
  }

  #runStages(s: FakeSession, index = 0): void {
    const name = STAGES[index];
    if (name === undefined) {
      this.#startAgent(s);
      this.#setState(s, 'ready');
      return;
    }
    const startedAt = new Date();
    const base: StageRecord = { name, status: 'running', startedAt: startedAt.toISOString(), endedAt: null, durationMs: null, reason: null, message: null };
    this.#stage(s, base);
    if (name === 'workspace') mkdirSync(s.view.workspacePath ?? this.#root, { recursive: true });
    if (name === 'agentctl_start') this.#stage(s, { ...base, status: 'waiting', reason: 'Starting', message: 'waiting for agentctl to listen' });
    const watched = (): boolean => [...this.#listeners].some((l) => l.sessionId === s.view.id);
    const finish = (): void => {
      if (name === 'agentctl_start' && this.#waitForWatcher && !watched()) {
        this.#later(s, this.#stageMs, finish);
        return;
      }
      const end = new Date();
      const failed = name === 'agent_start' && s.view.agent === 'fail';
      this.#stage(s, {
        ...base,
        status: failed ? 'failed' : 'succeeded',
        endedAt: end.toISOString(),
        durationMs: end.getTime() - startedAt.getTime(),
        ...(failed ? { reason: 'AgentExited', message: 'the agent exited with code 1 right after starting' } : {}),
      });
      if (failed) {
        s.view.error = { message: 'agent_start: the agent exited with code 1 right after starting', stage: name };
        this.#setState(s, 'failed');
        return;
      }
      this.#runStages(s, index + 1);
    };
    this.#later(s, this.#stageMs, finish);
  }

  #startAgent(s: FakeSession): void {
    s.agentRunning = true;
    s.view.agentProcess = { id: 'agent', status: 'running', exitCode: null };
    let line = 0;
    const tick = (): void => {
      line++;
      this.#append(s, 'stdout', `demo agent: step ${line}\n`);
      if (line >= this.#lines) {
        this.#stopAgent(s, 0);
        return;
      }
      this.#later(s, this.#tickMs, tick);
    };
    this.#later(s, 0, tick);
  }

  #append(s: FakeSession, stream: 'stdout' | 'stderr', text: string): void {
    s.chunks.push({ seq: s.chunks.length, stream, data: new TextEncoder().encode(text) });
    for (const wake of [...s.wakers]) wake();
  }

  #stopAgent(s: FakeSession, exitCode: number | null = null): void {
    if (!s.agentRunning) return;
    s.agentRunning = false;
    s.view.agentProcess = { id: 'agent', status: 'exited', exitCode };
    for (const wake of [...s.wakers]) wake();
  }

  #clearTimers(s: FakeSession): void {
    for (const t of s.timers) clearTimeout(t);
    s.timers.clear();
  }
}

/** A pull queue as an async iterable (iterate once): pushes wait until read, `end` finishes it. */
class AsyncQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #done = false;
  #error: unknown;
  #wake: (() => void) | undefined;

  push(item: T): void {
    this.#items.push(item);
    this.#wake?.();
  }

  end(): void {
    this.#done = true;
    this.#wake?.();
  }

  fail(err: unknown): void {
    this.#error = err;
    this.end();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const item = this.#items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.#error !== undefined) throw this.#error;
      if (this.#done) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }
}
