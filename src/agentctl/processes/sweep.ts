/**
 * After an instance's process groups are stopped, the processes of the session that left them
 * (`setsid`, `nohup … &`, double forks) are ended too, so a stop leaves nothing of the agent
 * running with the session's secrets. Which processes are the session's:
 *
 * - agentctl is PID 1 (the main container of a Kubernetes Pod, where it is exec'd as the
 *   container's init) and this was its last instance: every other process of the pid namespace
 *   (of any uid agentctl may signal). Nothing else runs in that namespace but what the session
 *   started (and `kubectl exec`s into the container, which belong to it as well).
 * - otherwise (the local executor, whose agentctl shares the host's or bwrap's pid namespace):
 *   only processes of agentctl's uid whose environment carries the instance's
 *   `BERTH_SESSION_ID=<id>`, never agentctl itself or its ancestors. (Under bwrap the namespace
 *   dies with agentctl as well, which catches a process that cleared its environment.)
 *
 * Each round sends SIGTERM first, then SIGKILL to what is left after the grace; rounds repeat
 * (bounded) while new processes appear, so a fork loop cannot outrun it.
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';

/** One process as read from /proc. */
export interface ProcEntry {
  pid: number;
  ppid: number;
  uid: number;
  /** `Z` for a zombie (already dead, waiting to be reaped): never a target. */
  state: string;
  /** The environment, or null when it could not be read (another uid, gone, a kernel thread). */
  environ: string[] | null;
}

type SweepScope = { kind: 'namespace' } | { kind: 'marker'; marker: string; uid: number };

/** The processes to end: pure selection over a /proc listing. */
export function sweepTargets(procs: readonly ProcEntry[], self: number, scope: SweepScope): number[] {
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const spared = new Set<number>([self]);
  // agentctl's ancestors (the shell that started it, bwrap, the user's session) are never targets
  for (let p = byPid.get(self); p !== undefined && !spared.has(p.ppid) && p.ppid > 0; p = byPid.get(p.ppid)) spared.add(p.ppid);
  return procs
    .filter((p) => !spared.has(p.pid) && p.pid !== 1 && p.state !== 'Z')
    .filter((p) => scope.kind === 'namespace' || (p.uid === scope.uid && p.environ?.includes(scope.marker) === true))
    .map((p) => p.pid);
}

/** Reads /proc (or `root`): every process with its parent, uid, state and, when readable, environment. */
export function readProcs(root = '/proc', withEnviron = true): ProcEntry[] {
  const out: ProcEntry[] = [];
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`${root}/${name}/status`, 'utf8');
      const field = (key: string): string => new RegExp(`^${key}:\\s*(\\S+)`, 'm').exec(status)?.[1] ?? '';
      let environ: string[] | null = null;
      if (withEnviron) {
        try {
          environ = readFileSync(`${root}/${name}/environ`, 'latin1').split('\0').filter((e) => e !== '');
        } catch {
          environ = null;
        }
      }
      out.push({ pid: Number(name), ppid: Number(field('PPid')), uid: Number(field('Uid')), state: field('State'), environ });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

interface SweepOptions {
  scope: SweepScope;
  /** Between SIGTERM and SIGKILL. */
  graceMs: number;
  self?: number;
  procRoot?: string;
}

const ROUNDS = 5;
const POLL_MS = 50;

/** Ends the session's processes (see the module comment); returns how many were signalled. */
export async function sweepSessionProcesses(opts: SweepOptions): Promise<number> {
  const self = opts.self ?? process.pid;
  const scan = (): number[] => sweepTargets(readProcs(opts.procRoot, opts.scope.kind === 'marker'), self, opts.scope);
  const signalled = new Set<number>();
  for (let round = 0; round < ROUNDS; round++) {
    const targets = scan();
    if (targets.length === 0) break;
    const signal: NodeJS.Signals = round === 0 ? 'SIGTERM' : 'SIGKILL';
    for (const pid of targets) {
      signalled.add(pid);
      try {
        process.kill(pid, signal);
      } catch {
        // gone, or not ours to signal
      }
    }
    const deadline = Date.now() + (round === 0 ? opts.graceMs : 500);
    while (Date.now() < deadline && scan().length > 0) await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return signalled.size;
}

/** How the stop of an instance finds its session's processes (see the module comment). */
export function sweepScope(instanceEnv: Readonly<Record<string, string>>, lastInstance: boolean, pid = process.pid, uid = process.getuid?.() ?? -1): SweepScope | null {
  if (pid === 1 && lastInstance) return { kind: 'namespace' };
  const session = instanceEnv.BERTH_SESSION_ID;
  if (session === undefined || session === '') return null;
  return { kind: 'marker', marker: `BERTH_SESSION_ID=${session}`, uid };
}
