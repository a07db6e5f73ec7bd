/**
 * The processes of one instance: spawn (own process group, no shell), stdin, signals, sequenced
 * output, caps, graceful stop, and recovery of the records an earlier agentctl run left on disk.
 * @module
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { EventPage, ProcessInfo, SignalName, StartProcessRequest } from '../../protocol/index.js';
import { AcpClient } from '../acp/client.js';
import { EVENTS_FILE, EventLog } from '../acp/events.js';
import { resumePlan, type ResumePlan } from '../acp/resume.js';
import { protocolError } from '../errors.js';
import type { Workspace } from '../workspace/files.js';
import { confine } from '../workspace/paths.js';
import { agentStateDir, expandAgentState, seedAgentFiles } from './agent-state.js';
import { childEnv } from './child-env.js';
import { procStartTime } from '../../shared/proc.js';
import { OUTPUT_FILE, processDir, writeMeta, type ProcessMeta } from './meta.js';
import { recoverRecords } from './recover.js';
import { OutputLog, type StoredChunk } from './output-log.js';

interface ProcessListener {
  chunk(chunk: StoredChunk): void;
  exit(info: ProcessInfo): void;
}

interface ManagedProcess {
  meta: ProcessMeta;
  readonly dir: string;
  /** `null` while an exited process's output is not loaded (see #outputOf). */
  output: OutputLog | null;
  readonly listeners: Set<ProcessListener>;
  child: ChildProcessWithoutNullStreams | null;
  /** An ACP agent's client and event log, while it runs. */
  acp: { readonly client: AcpClient; readonly events: EventLog } | null;
  /** Resolves once the process has exited and its record is final. */
  readonly exited: Promise<void>;
  markExited: () => void;
}

interface SupervisorOptions {
  readonly workspace: Workspace;
  readonly stateRoot: string;
  readonly instanceEnv: Readonly<Record<string, string>>;
  readonly maxProcesses: number;
  readonly maxOutputBytes: number;
  readonly stopGraceMs: number;
  readonly log: Logger;
}

/** After the main process exits, how long to wait for its pipes to close (a background child may hold them). */
const PIPE_CLOSE_GRACE_MS = 2000;
const SIGKILL_WAIT_MS = 5000;
/** Exited processes whose output stays in memory (each up to the per-process cap). */
const RETAINED_EXITED_OUTPUTS = 8;

type StartRequest = Required<Pick<StartProcessRequest, 'command' | 'env' | 'kind'>> & Pick<StartProcessRequest, 'cwd' | 'id' | 'protocol' | 'approve' | 'prompt' | 'resume_from' | 'agent_state' | 'agent_files' | 'mode'>;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function sameCommand(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export class ProcessSupervisor {
  readonly #opts: SupervisorOptions;
  readonly #processes = new Map<string, ManagedProcess>();
  /** Ids of exited processes whose output is in memory, least recently used first. */
  readonly #recentExited = new Set<string>();
  #closed = false;
  /** The last stdin write to any process (epoch ms), for the activity report (activity/). */
  lastInput: { readonly at: number; readonly process: string } | null = null;

  constructor(options: SupervisorOptions) {
    this.#opts = options;
    this.#recover();
  }

  /** Loads the records an earlier run left behind (see recover.ts); their output loads on demand. */
  #recover(): void {
    const { stateRoot, log, maxOutputBytes } = this.#opts;
    for (const meta of recoverRecords(stateRoot, maxOutputBytes, log)) {
      const dir = processDir(stateRoot, meta.id);
      this.#processes.set(meta.id, { meta, dir, output: null, listeners: new Set(), child: null, acp: null, exited: Promise.resolve(), markExited: () => undefined });
    }
  }

  /**
   * The output of `proc`. Running processes always hold theirs; of exited ones only the most
   * recently used few stay in memory, the rest are read back from disk when asked for.
   */
  #outputOf(proc: ManagedProcess): OutputLog {
    let output = proc.output;
    if (output === null) {
      output = OutputLog.load(join(proc.dir, OUTPUT_FILE), this.#opts.maxOutputBytes, proc.meta.next_seq);
      proc.output = output;
    }
    if (proc.meta.status === 'exited') this.#touchExited(proc);
    return output;
  }

  #touchExited(proc: ManagedProcess): void {
    this.#recentExited.delete(proc.meta.id);
    this.#recentExited.add(proc.meta.id);
    for (const id of this.#recentExited) {
      if (this.#recentExited.size <= RETAINED_EXITED_OUTPUTS) break;
      this.#recentExited.delete(id);
      const evicted = this.#processes.get(id);
      if (evicted !== undefined && evicted.meta.status === 'exited') evicted.output = null;
    }
  }

  list(): ProcessInfo[] {
    return [...this.#processes.values()].map((p) => this.#info(p));
  }

  get(id: string): ProcessInfo {
    return this.#info(this.#find(id));
  }

  #find(id: string): ManagedProcess {
    const proc = this.#processes.get(id);
    if (proc === undefined) throw protocolError('not_found', `no process ${id}`);
    return proc;
  }

  #info(p: ManagedProcess): ProcessInfo {
    const m = p.meta;
    return {
      id: m.id,
      kind: m.kind,
      command: m.command,
      cwd: m.cwd,
      status: m.status,
      pid: m.pid,
      exit_code: m.exit_code,
      signal: m.signal,
      started_at: m.started_at,
      ended_at: m.ended_at,
      next_seq: m.status === 'running' && p.output !== null ? p.output.nextSeq : m.next_seq,
      orphaned: m.orphaned,
      ...(m.protocol === 'acp' ? { protocol: m.protocol } : {}),
      ...(p.acp !== null ? { acp: p.acp.client.info() } : {}),
    };
  }

  #running(): number {
    let n = 0;
    for (const p of this.#processes.values()) if (p.meta.status === 'running') n++;
    return n;
  }

  /** Starts a process; with a known caller id returns the existing one (`created: false`). */
  async start(request: StartRequest): Promise<{ created: boolean; info: ProcessInfo }> {
    const { workspace } = this.#opts;
    const existing = request.id === undefined ? undefined : this.#processes.get(request.id);
    if (existing !== undefined) return { created: false, info: this.#sameOrConflict(existing, request) };
    if (request.protocol !== 'acp' && request.prompt !== undefined) throw protocolError('bad_request', 'prompt: only an ACP process (protocol acp) takes a prompt');
    const resume = request.resume_from === undefined ? undefined : resumePlan(request.resume_from, request.protocol, this.#processes.get(request.resume_from), this.#opts.maxOutputBytes);
    if (request.protocol !== 'acp' && request.mode !== undefined) throw protocolError('bad_request', 'mode: only an ACP process (protocol acp) has a session mode');
    if (request.agent_files !== undefined && request.agent_state === undefined) throw protocolError('bad_request', 'agent_files: needs agent_state (the directory they go in)');

    const cwd = await confine(workspace.realRoot, workspace.declaredRoot, request.cwd ?? '.', 'read');
    let cwdStat;
    try {
      cwdStat = await stat(cwd.abs);
    } catch {
      throw protocolError('not_a_directory', `cwd: ${cwd.rel} does not exist`);
    }
    if (!cwdStat.isDirectory()) throw protocolError('not_a_directory', `cwd: ${cwd.rel} is not a directory`);

    // Everything below is synchronous up to the spawn, so concurrent starts cannot interleave.
    if (this.#closed) throw protocolError('unavailable', 'instance is stopping');
    const raced = request.id === undefined ? undefined : this.#processes.get(request.id);
    if (raced !== undefined) return { created: false, info: this.#sameOrConflict(raced, request) };
    if (this.#running() >= this.#opts.maxProcesses) {
      throw protocolError('too_many_processes', `at most ${this.#opts.maxProcesses} processes may run at once in an instance`);
    }
    const id = request.id ?? `p-${randomBytes(8).toString('hex')}`;
    return { created: true, info: await this.#spawn(id, request, cwd.abs, cwd.rel, resume) };
  }

  #sameOrConflict(existing: ManagedProcess, request: StartRequest): ProcessInfo {
    if (!sameCommand(existing.meta.command, request.command)) {
      throw protocolError('conflict', `process ${existing.meta.id} already exists with another command`);
    }
    return this.#info(existing);
  }

  async #spawn(id: string, request: StartRequest, cwdAbs: string, cwdRel: string, resume: ResumePlan | undefined): Promise<ProcessInfo> {
    const state = request.agent_state === undefined ? null : agentStateDir(this.#opts.stateRoot, request.agent_state);
    if (state !== null && request.agent_files !== undefined) seedAgentFiles(state, request.agent_files);
    const run = state === null ? { command: request.command, env: request.env } : expandAgentState(request.command, request.env, state);
    const [file, ...args] = run.command as [string, ...string[]];
    const child = spawn(file, args, {
      cwd: cwdAbs,
      env: childEnv(process.env, this.#opts.instanceEnv, run.env),
      // Own process group: signals go to -pid and reach the whole tree the process starts.
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    if (child.pid === undefined) {
      const error = await new Promise<NodeJS.ErrnoException>((resolve) => child.once('error', resolve));
      const errno = typeof error.code === 'string' && /^[A-Z][A-Z0-9_]{1,31}$/.test(error.code) ? error.code : 'UNKNOWN';
      throw protocolError('spawn_failed', `cannot start ${file}: ${errno === 'UNKNOWN' ? error.message : errno}`, { cause: error, errno });
    }
    const dir = processDir(this.#opts.stateRoot, id);
    const meta: ProcessMeta = {
      id,
      kind: request.kind,
      command: [...request.command],
      cwd: cwdRel,
      status: 'running',
      pid: child.pid,
      proc_start: procStartTime(child.pid),
      exit_code: null,
      signal: null,
      started_at: new Date().toISOString(),
      ended_at: null,
      next_seq: 0,
      orphaned: false,
      ...(request.protocol === 'acp' ? { protocol: 'acp' as const } : {}),
    };
    let output: OutputLog;
    let events: EventLog | null = null;
    try {
      writeMeta(dir, meta);
      output = OutputLog.open(join(dir, OUTPUT_FILE), this.#opts.maxOutputBytes);
      if (request.protocol === 'acp') events = EventLog.open(join(dir, EVENTS_FILE), this.#opts.maxOutputBytes);
    } catch (err) {
      // Never leave a process running that nothing records or supervises.
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      throw err;
    }
    const done = deferred();
    const proc: ManagedProcess = { meta, dir, output, listeners: new Set(), child, acp: null, exited: done.promise, markExited: done.resolve };
    if (events !== null) {
      const { workspace, log } = this.#opts;
      const client = new AcpClient({ stdin: child.stdin, stdout: child.stdout, workspace, approve: request.approve ?? 'ask', mode: request.mode ?? null, events, log: log.child({ process: id }) });
      proc.acp = { client, events };
    }
    this.#processes.set(id, proc);
    this.#attach(proc, output, child);
    // a resumed conversation that already had its first turn does not get the launch prompt again
    proc.acp?.client.start(resume?.hadPrompt === true ? undefined : request.prompt, resume?.target);
    this.#opts.log.info({ process: id, pid: child.pid, kind: request.kind }, 'process started');
    return this.#info(proc);
  }

  #attach(proc: ManagedProcess, output: OutputLog, child: ChildProcessWithoutNullStreams): void {
    const onData = (stream: 'stdout' | 'stderr') => (data: Buffer) => {
      const chunk = output.append(stream, data);
      for (const l of proc.listeners) l.chunk(chunk);
    };
    // an ACP agent's stdout is the protocol (read by its AcpClient); its stderr is recorded as usual
    if (proc.acp === null) child.stdout.on('data', onData('stdout'));
    child.stderr.on('data', onData('stderr'));
    child.stdin.on('error', () => undefined); // EPIPE after the process closed its stdin
    child.on('error', (err) => this.#opts.log.warn({ process: proc.meta.id, err }, 'process error'));
    let finalized = false;
    const finalize = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (finalized) return;
      finalized = true;
      proc.acp?.client.close();
      proc.acp?.events.close();
      proc.acp = null;
      child.stdout.destroy();
      child.stderr.destroy();
      child.stdin.destroy();
      output.close();
      proc.meta = { ...proc.meta, status: 'exited', exit_code: code, signal, ended_at: new Date().toISOString(), next_seq: output.nextSeq };
      this.#touchExited(proc);
      proc.child = null;
      try {
        writeMeta(proc.dir, proc.meta);
      } catch (err) {
        this.#opts.log.error({ process: proc.meta.id, err }, 'cannot record process exit');
      }
      this.#opts.log.info({ process: proc.meta.id, exit_code: code, signal }, 'process exited');
      const info = this.#info(proc);
      for (const l of proc.listeners) l.exit(info);
      proc.listeners.clear();
      proc.markExited();
    };
    child.on('exit', (code, signal) => {
      // 'close' follows once the pipes drain; don't wait forever if a grandchild holds them open.
      setTimeout(() => finalize(code, signal), PIPE_CLOSE_GRACE_MS).unref();
    });
    child.on('close', (code, signal) => finalize(code, signal));
  }

  /** Writes to the process's stdin; `eof` closes it afterwards. */
  async writeStdin(id: string, data: Buffer, eof: boolean): Promise<void> {
    const proc = this.#find(id);
    const stdin = proc.child?.stdin;
    if (proc.meta.status !== 'running' || stdin === undefined) throw protocolError('conflict', `process ${id} has exited`);
    if (proc.acp !== null) throw protocolError('conflict', `process ${id} speaks ACP on its stdin: send a turn with …/prompt instead`);
    if (stdin.writableEnded || stdin.destroyed) throw protocolError('conflict', `stdin of process ${id} is closed`);
    this.lastInput = { at: Date.now(), process: id };
    await new Promise<void>((resolve, reject) => {
      const cb = (err?: Error | null): void => (err ? reject(protocolError('conflict', `writing to stdin of ${id}: ${err.message}`)) : resolve());
      if (eof) stdin.end(data, cb);
      else stdin.write(data, cb);
    });
  }

  /** Sends `signal` to the process group. */
  signal(id: string, signal: SignalName): void {
    const proc = this.#find(id);
    if (proc.meta.status !== 'running' || proc.meta.pid === null) throw protocolError('conflict', `process ${id} has exited`);
    this.#killGroup(proc, signal);
  }

  #killGroup(proc: ManagedProcess, signal: NodeJS.Signals): void {
    if (proc.meta.pid === null) return;
    try {
      process.kill(-proc.meta.pid, signal);
    } catch {
      // ESRCH: the group is gone; the exit event follows
    }
  }

  /** The output slice for `GET …/output`. */
  page(id: string, from: number, limit: number): { info: ProcessInfo; slice: ReturnType<OutputLog['page']> } {
    const proc = this.#find(id);
    return { info: this.#info(proc), slice: this.#outputOf(proc).page(from, limit) };
  }

  /**
   * Replays from `from` and subscribes in the same tick, so no chunk falls between the two.
   * Returns an unsubscribe function, or `null` if the process already exited (replay only).
   */
  follow(id: string, from: number, listener: ProcessListener, replay: (chunks: readonly StoredChunk[], firstAvailable: number) => void): (() => void) | null {
    const proc = this.#find(id);
    const slice = this.#outputOf(proc).page(from, Number.MAX_SAFE_INTEGER);
    replay(slice.chunks, slice.firstAvailable);
    if (proc.meta.status !== 'running') {
      listener.exit(this.#info(proc));
      return null;
    }
    proc.listeners.add(listener);
    return () => proc.listeners.delete(listener);
  }

  /** The ACP client of running ACP process `id` (conflict for a raw process or one that exited). */
  acp(id: string): AcpClient {
    const proc = this.#find(id);
    if (proc.acp === null) throw protocolError('conflict', proc.meta.protocol === 'acp' ? `process ${id} has exited` : `process ${id} does not speak ACP`);
    return proc.acp.client;
  }

  /** Resolves when running ACP process `id` records an event from `from` on, exits, or after `ms`. */
  async waitEvents(id: string, from: number, ms: number): Promise<void> {
    const proc = this.#find(id);
    if (proc.acp === null || proc.meta.status !== 'running') return;
    await proc.acp.events.waitFor(from, ms);
  }

  /** The recorded events of ACP process `id` (read back from disk once it exited). */
  events(id: string, from: number, limit: number): EventPage {
    const proc = this.#find(id);
    if (proc.meta.protocol !== 'acp') throw protocolError('conflict', `process ${id} does not speak ACP`);
    const events = proc.acp?.events ?? EventLog.load(join(proc.dir, EVENTS_FILE), this.#opts.maxOutputBytes);
    return events.page(from, limit, proc.meta.status === 'exited');
  }

  /** Stops one process: SIGTERM to its group, SIGKILL after the grace period. */
  async #stop(proc: ManagedProcess): Promise<void> {
    if (proc.meta.status !== 'running') return;
    this.#killGroup(proc, 'SIGTERM');
    const graceful = await Promise.race([proc.exited.then(() => true), delay(this.#opts.stopGraceMs).then(() => false)]);
    if (graceful) return;
    this.#opts.log.warn({ process: proc.meta.id }, 'process ignored SIGTERM; sending SIGKILL');
    this.#killGroup(proc, 'SIGKILL');
    await Promise.race([proc.exited, delay(SIGKILL_WAIT_MS)]);
  }

  /** Stops every running process; new starts are refused from now on. */
  async stopAll(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#processes.values()].map((p) => this.#stop(p)));
  }
}
