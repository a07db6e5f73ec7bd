/**
 * Starting and stopping the local agentctl: a detached child of the controller (so it outlives a
 * controller restart) that binds free loopback ports itself and reports its control port over an
 * inherited pipe (report-pipe.ts), logging to `<sessionDir>/agentctl.log`, started with only the
 * base environment, inside the bubblewrap sandbox when one is planned (sandbox.ts).
 * @module
 */
import { spawn } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { codeCachePath, LOADER_FILE } from '../../agentctl/code-cache.js';
import { CHILD_BASE_ENV, CHILD_BASE_ENV_PREFIXES, ENV, type PortReport } from '../../protocol/index.js';
import { openAppendConfinedSync, readConfinedTailSync } from '../../shared/confined-read.js';
import { sanitize } from '../../shared/sanitize.js';
import { LaunchError } from '../launch-kit/index.js';
import { FILES, OWNER_ENV, STAGE } from './constants.js';
import { CONTROL_SOCKET_FD } from './control-socket.js';
import { findProcessesByEnv, isAlive, isOurProcess, procComm, procEnvValue, procStartTime, waitForExit } from './proc.js';
import { readPortReport, REPORT_FD } from './report-pipe.js';
import { bwrapArgs, type SandboxPlan } from './sandbox.js';

export interface AgentctlProcess {
  pid: number;
  /** Start time (for the pid-reuse guard), or null without /proc. */
  procStart: string | null;
  /**
   * The port report agentctl writes on its pipe once it listens (await it with
   * `waitForPortReport`): null when the pipe closed without one; rejects when it is malformed.
   */
  report: Promise<PortReport | null>;
  /** Resolves with a description when the process exits (used while waiting for health). */
  exited: Promise<string>;
}

interface SpawnAgentctlOptions {
  agentctlPath: string;
  sessionDir: string;
  nonce: string;
  /** Value of the owner marker (`AGENTCTL_BERTH_OWNER`). */
  owner: string;
  /** Base environment ({@link agentctlBaseEnv} of the controller's). */
  baseEnv: NodeJS.ProcessEnv;
  /** Run agentctl inside bubblewrap with this plan; null runs it unconfined. */
  sandbox: SandboxPlan | null;
  /** A listening control socket agentctl serves on too, passed as fd {@link CONTROL_SOCKET_FD} (control-socket.ts). */
  controlSocketFd?: number | null;
  /** More of agentctl's own settings (`AGENTCTL_*`: its children never see them). */
  extraEnv?: Readonly<Record<string, string>>;
}

/**
 * The base environment agentctl starts with: only the `CHILD_BASE_ENV` names of the controller's
 * environment (PATH, HOME, locale, terminal, TZ, USER/LOGNAME, SHELL, TMPDIR). The controller's
 * other variables — API keys, cloud credentials, `berth serve`'s own settings — never reach agentctl
 * and so no agent; an agent gets a secret only when a launch approves it by name (instance env).
 */
export function agentctlBaseEnv(env: Readonly<Record<string, string | undefined>>): NodeJS.ProcessEnv {
  const base: ReadonlySet<string> = new Set(CHILD_BASE_ENV);
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && (base.has(k) || CHILD_BASE_ENV_PREFIXES.some((p) => k.startsWith(p)))) out[k] = v;
  }
  return out;
}

/** Children of `pid` (`/proc/<pid>/task/<pid>/children`), or null where the kernel does not offer the file. */
function childrenOf(pid: number): number[] | null {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return null;
  }
}

/**
 * The agentctl below bwrap `sandboxPid` (bwrap → its init → agentctl), carrying our marker. Walks
 * the children lists: a scan of every process's environment would cost milliseconds per poll.
 */
function findSandboxed(sandboxPid: number, owner: string): number | undefined {
  let level = [sandboxPid];
  for (let depth = 0; depth < 3; depth++) {
    const next: number[] = [];
    for (const pid of level) {
      const children = childrenOf(pid);
      if (children === null) return findProcessesByEnv(OWNER_ENV, owner).find((p) => procComm(p) !== 'bwrap');
      next.push(...children);
    }
    const found = next.find((p) => procComm(p) !== 'bwrap' && procEnvValue(p, OWNER_ENV) === owner);
    if (found !== undefined) return found;
    level = next;
  }
  return undefined;
}

/** The pid (seen from outside) of the agentctl inside sandbox `sandboxPid`. */
async function sandboxedAgentctlPid(sandboxPid: number, owner: string, exited: Promise<string>, timeoutMs: number): Promise<number> {
  let exitedWith: string | null = null;
  void exited.then((d) => (exitedWith = d));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pid = findSandboxed(sandboxPid, owner);
    if (pid !== undefined) return pid;
    if (exitedWith !== null) throw new Error(`the sandbox exited before agentctl started (${exitedWith})`);
    if (Date.now() > deadline) throw new Error(`agentctl did not start inside the sandbox within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/**
 * The command that starts the agentctl bundle: through the loader beside it, from the V8 code cache
 * the build wrote (about 50 ms less per start), when both are there; else the bundle itself.
 */
export function agentctlStartCommand(agentctlPath: string): string[] {
  const loader = join(dirname(agentctlPath), LOADER_FILE);
  if (existsSync(loader) && existsSync(codeCachePath(agentctlPath))) return [process.execPath, loader, agentctlPath];
  return [process.execPath, agentctlPath];
}

export async function spawnAgentctl(opts: SpawnAgentctlOptions): Promise<AgentctlProcess> {
  if (!existsSync(opts.agentctlPath)) {
    throw new LaunchError(
      STAGE.agentctlStart,
      'AgentctlMissing',
      `agentctl bundle not found at ${opts.agentctlPath} (run: npm run build, or set executors.<name>.agentctl_path)`,
    );
  }
  const stateDir = join(opts.sessionDir, FILES.agentctlState);
  const nonceFile = writeNonceFile(stateDir, opts.nonce);
  const logPath = join(opts.sessionDir, FILES.agentctlLog);
  // not followed, never a FIFO (its open would block serve): the session dir may be an unsandboxed agent's
  const logFd = openAppendConfinedSync(logPath);
  let child;
  const controlFd = opts.controlSocketFd ?? null;
  const command = agentctlStartCommand(opts.agentctlPath);
  const [file, args] = opts.sandbox === null ? [command[0]!, command.slice(1)] : ['bwrap', [...bwrapArgs(opts.sandbox), '--', ...command]];
  try {
    child = spawn(file, args, {
      cwd: opts.sessionDir,
      detached: true,
      // fd 3: the pipe agentctl reports its port on (bwrap passes inherited descriptors through); fd 4 its control socket
      stdio: ['ignore', logFd, logFd, 'pipe', ...(controlFd === null ? [] : [controlFd])],
      env: {
        ...opts.baseEnv,
        ...opts.extraEnv,
        ...(controlFd === null ? {} : { [ENV.controlFd]: String(CONTROL_SOCKET_FD) }),
        // agentctl binds free ports itself: a port picked here and bound later could be taken in between
        [ENV.controlPort]: '0',
        [ENV.instancePorts]: '0',
        [ENV.reportFd]: String(REPORT_FD),
        // the nonce travels in a file agentctl reads and removes before it listens: in no environment
        // (an agent can read agentctl's /proc/PID/environ)
        [ENV.bootstrapNonceFile]: nonceFile,
        [ENV.stateDir]: stateDir,
        [ENV.stopGraceMs]: '3000',
        [OWNER_ENV]: opts.owner,
      },
    });
  } finally {
    closeSync(logFd);
  }
  const spawned = child.pid;
  if (spawned === undefined) {
    const err = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw new LaunchError(STAGE.agentctlStart, 'AgentctlSpawnFailed', `cannot start ${opts.sandbox === null ? 'agentctl' : 'agentctl in bwrap'}: ${err.message}`, { cause: err });
  }
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `exit code ${code}`));
  });
  const pipe = child.stdio[REPORT_FD] as Readable & { unref?: () => void };
  pipe.unref?.();
  const report = readPortReport(pipe);
  report.catch(() => undefined);
  child.unref();
  let pid = spawned;
  if (opts.sandbox !== null) {
    // Recorded and signalled is agentctl itself (seen from outside the pid namespace), not bwrap:
    // bwrap forwards no signal, and agentctl's graceful stop is what stops the agent cleanly.
    try {
      pid = await sandboxedAgentctlPid(spawned, opts.owner, exited, 10_000);
    } catch (err) {
      killSandbox(opts.owner);
      const tail = agentctlLogTail(opts.sessionDir);
      throw new LaunchError(STAGE.agentctlStart, 'SandboxFailed', `agentctl_start: ${(err as Error).message}${tail ? ` (log: ${tail})` : ''}`, { cause: err });
    }
  }
  return { pid, procStart: procStartTime(pid), report, exited };
}

/** Name of the one-shot nonce file in agentctl's state dir (agentctl removes it at start). */
const NONCE_FILE = '.bootstrap-nonce';

/**
 * Writes `nonce` to a fresh 0600 file in `stateDir` (which the sandbox binds, so agentctl reads it
 * at the same path). Whatever an agent left under that name (a link, a FIFO) is removed first and
 * the file is created exclusively without following links: the nonce goes nowhere else.
 */
function writeNonceFile(stateDir: string, nonce: string): string {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const path = join(stateDir, NONCE_FILE);
  try {
    unlinkSync(path);
  } catch {
    // none left
  }
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    throw new LaunchError(STAGE.agentctlStart, 'AgentctlSpawnFailed', `cannot write agentctl's nonce file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, { cause: err });
  }
  try {
    writeSync(fd, nonce);
  } finally {
    closeSync(fd);
  }
  return path;
}

/** SIGKILLs every process carrying the owner marker (agentctl and the bwrap processes around it). */
function killSandbox(owner: string): void {
  for (const pid of findProcessesByEnv(OWNER_ENV, owner)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/**
 * Waits (up to `timeoutMs`) until no process carries the owner marker, then SIGKILLs what is left:
 * after agentctl exits, bwrap's init and monitor follow within milliseconds; a caller that goes on
 * to remove the workspace must not race them.
 */
export async function waitSandboxGone(owner: string, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (findProcessesByEnv(OWNER_ENV, owner).every((p) => !isAlive(p))) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  killSandbox(owner);
}

/** The last lines of the agentctl log, sanitized (for error messages). */
export function agentctlLogTail(sessionDir: string, lines = 5): string {
  try {
    // an unsandboxed agent can replace the log (a FIFO would block serve): a bounded read of a regular file only
    const text = readConfinedTailSync(join(sessionDir, FILES.agentctlLog), 64 * 1024)?.toString('utf8') ?? '';
    return sanitize(text.split('\n').filter((l) => l.trim() !== '').slice(-lines).join(' | '));
  } catch {
    return '';
  }
}

interface OwnedPid {
  pid: number;
  procStart: string | null;
  owner: string;
}

/**
 * Stops an agentctl we started: SIGTERM (it stops its processes), then SIGKILL after `graceMs`.
 * A pid that is gone or no longer ours (reused) is left alone. Returns what happened.
 */
export async function stopAgentctl(target: OwnedPid, graceMs = 8000): Promise<'stopped' | 'not_running'> {
  const owned = { env: OWNER_ENV, value: target.owner, procStart: target.procStart };
  if (!isOurProcess(target.pid, owned)) return 'not_running';
  try {
    process.kill(target.pid, 'SIGTERM');
  } catch {
    return 'not_running';
  }
  if (await waitForExit(target.pid, graceMs)) return 'stopped';
  if (isOurProcess(target.pid, owned)) {
    try {
      // the whole group: agentctl and anything it failed to stop
      process.kill(-target.pid, 'SIGKILL');
    } catch {
      process.kill(target.pid, 'SIGKILL');
    }
    await waitForExit(target.pid, 2000);
  }
  await waitSandboxGone(target.owner);
  return 'stopped';
}
