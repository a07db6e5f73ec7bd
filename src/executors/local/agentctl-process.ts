/**
 * Starting and stopping the local agentctl: a detached child of the controller (so it outlives a
 * controller restart) on free loopback ports, logging to `<sessionDir>/agentctl.log`.
 * @module
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ENV } from '../../protocol/index.js';
import { sanitize } from '../../shared/sanitize.js';
import { LaunchError } from '../executor.js';
import { FILES, INSTANCE_PORTS_PER_AGENTCTL, OWNER_ENV, STAGE } from './constants.js';
import { isOurProcess, procStartTime, waitForExit } from './proc.js';

export interface AgentctlProcess {
  pid: number;
  /** Start time (for the pid-reuse guard), or null without /proc. */
  procStart: string | null;
  controlPort: number;
  instancePorts: number[];
  /** Resolves with a description when the process exits (used while waiting for health). */
  exited: Promise<string>;
}

export interface SpawnAgentctlOptions {
  agentctlPath: string;
  sessionDir: string;
  nonce: string;
  /** Value of the owner marker (`AGENTCTL_BERTH_OWNER`). */
  owner: string;
  /** Base environment (the controller's, without its own BERTH_/AGENTCTL_ variables). */
  baseEnv: NodeJS.ProcessEnv;
}

/** Ports handed out by this process and not yet surely bound by their agentctl (avoids handing one port twice). */
const recentlyReserved = new Set<number>();

async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.unref();
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const addr = srv.address();
        const p = typeof addr === 'object' && addr !== null ? addr.port : 0;
        srv.close(() => resolve(p));
      });
    });
    if (port > 0 && !recentlyReserved.has(port)) {
      recentlyReserved.add(port);
      setTimeout(() => recentlyReserved.delete(port), 60_000).unref();
      return port;
    }
  }
  throw new Error('no free loopback port found');
}

/** Environment of the controller minus variables that must not leak into agentctl and the agent. */
export function agentctlBaseEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith('AGENTCTL_') || k.startsWith('BERTH_') || k === 'NODE_OPTIONS' || k.startsWith('VITEST')) continue;
    out[k] = v;
  }
  return out;
}

export async function spawnAgentctl(opts: SpawnAgentctlOptions): Promise<AgentctlProcess> {
  if (!existsSync(opts.agentctlPath)) {
    throw new LaunchError(
      STAGE.agentctlStart,
      'AgentctlMissing',
      `agentctl bundle not found at ${opts.agentctlPath} (run: npm run build, or set executors.<name>.agentctl_path)`,
    );
  }
  const controlPort = await freePort();
  const instancePorts: number[] = [];
  for (let i = 0; i < INSTANCE_PORTS_PER_AGENTCTL; i++) instancePorts.push(await freePort());
  const logPath = join(opts.sessionDir, FILES.agentctlLog);
  const logFd = openSync(logPath, 'a', 0o600);
  let child;
  try {
    child = spawn(process.execPath, [opts.agentctlPath], {
      cwd: opts.sessionDir,
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env: {
        ...opts.baseEnv,
        [ENV.controlPort]: String(controlPort),
        [ENV.instancePorts]: instancePorts.join(','),
        [ENV.bootstrapNonce]: opts.nonce,
        [ENV.stateDir]: join(opts.sessionDir, FILES.agentctlState),
        [ENV.stopGraceMs]: '3000',
        [OWNER_ENV]: opts.owner,
      },
    });
  } finally {
    closeSync(logFd);
  }
  const pid = child.pid;
  if (pid === undefined) {
    const err = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw new LaunchError(STAGE.agentctlStart, 'AgentctlSpawnFailed', `cannot start agentctl: ${err.message}`, { cause: err });
  }
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `exit code ${code}`));
  });
  child.unref();
  return { pid, procStart: procStartTime(pid), controlPort, instancePorts, exited };
}

/** The last lines of the agentctl log, sanitized (for error messages). */
export function agentctlLogTail(sessionDir: string, lines = 5): string {
  try {
    const text = readFileSync(join(sessionDir, FILES.agentctlLog), 'utf8');
    return sanitize(text.split('\n').filter((l) => l.trim() !== '').slice(-lines).join(' | '));
  } catch {
    return '';
  }
}

export interface OwnedPid {
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
  return 'stopped';
}
