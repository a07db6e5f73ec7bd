/**
 * Process facts from /proc (Linux): liveness, start time and environment, used to make sure a
 * recorded pid still is the agentctl we started before signalling it.
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';
import { procStartTime, procState } from '../../shared/proc.js';

export { procStartTime };

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return procState(pid) !== 'Z';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The value of one environment variable of a running process, or null (gone, not ours, no /proc). */
export function procEnvValue(pid: number, name: string): string | null {
  try {
    const environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    for (const entry of environ.split('\0')) {
      if (entry.startsWith(`${name}=`)) return entry.slice(name.length + 1);
    }
    return null;
  } catch {
    return null;
  }
}

/**
 * True only when `pid` is alive and provably the process we recorded: same start time when one was
 * recorded, and our owner marker in its environment.
 */
export function isOurProcess(pid: number, owner: { env: string; value: string; procStart: string | null }): boolean {
  if (!Number.isInteger(pid) || pid <= 1 || !isAlive(pid)) return false;
  if (owner.procStart !== null && procStartTime(pid) !== owner.procStart) return false;
  return procEnvValue(pid, owner.env) === owner.value;
}

/** The command name of a process (`/proc/<pid>/comm`), or null. */
export function procComm(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return null;
  }
}

/** Pids of live processes whose `env` variable equals `value` (a fallback when no pid was recorded). */
export function findProcessesByEnv(env: string, value: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    if (procEnvValue(pid, env) === value && isAlive(pid)) out.push(pid);
  }
  return out;
}

/** Waits until `pid` is gone, polling every 50 ms, up to `timeoutMs`. Returns true when gone. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}
