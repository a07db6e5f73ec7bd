/**
 * The executor contract (test/contract/executor-contract.ts) run against the local executor on real
 * processes: a bare `LocalExecutor` on a temp data dir, cloning a local git repository. What it holds
 * for a session is its session dir and the agentctl processes carrying its owner marker; what it
 * exposes is those processes' argv (world-readable) and agentctl's log.
 * @module
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { executorContract, type HeldResource } from '../../contract/executor-contract.js';
import { LocalExecutor, OWNER_ENV } from '../../../src/executors/local/index.js';
import { agentctlBundle, cleanup, killLeftovers, makeRepo, tempDir } from './helpers.js';

/** Live processes (not zombies) whose environment carries the owner marker of `sessionDir`. */
function ownedProcesses(sessionDir: string): { pid: number; comm: string; cmdline: string }[] {
  const out: { pid: number; comm: string; cmdline: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const environ = readFileSync(`/proc/${name}/environ`, 'latin1').split('\0');
      if (!environ.some((e) => e.startsWith(`${OWNER_ENV}=${sessionDir}#`))) continue;
      out.push({ pid: Number(name), comm: readFileSync(`/proc/${name}/comm`, 'utf8').trim(), cmdline: readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ') });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

executorContract(
  'local',
  async () => {
    const work = tempDir('contract');
    const dataDir = join(work, 'data');
    const sessionDir = (id: string) => join(dataDir, 'workspaces', id);
    const agentctlPath = agentctlBundle(work);
    const open = () => new LocalExecutor({ dataDir, agentctlPath });
    return {
      executor: open(),
      reopen: open,
      // src/controller/launch.ts: the snapshot of a session launched on the local executor
      profile: { executor: 'local', profile: null, type: 'local', settings: {}, env: {} },
      repository: { path: makeRepo(work, 'repo', 'marker-local') },
      marker: { file: 'BERTH_MARKER', text: 'marker-local\n' },
      // passes validation (a URL), then the clone fails: nothing listens on port 1
      badRepository: { url: 'git://127.0.0.1:1/no-such-repo.git' },
      failingSetupProfile: undefined,
      async held(id) {
        const held: HeldResource[] = [];
        if (existsSync(sessionDir(id))) held.push({ what: `session dir ${sessionDir(id)}`, recordedAs: sessionDir(id) });
        // the bwrap processes around a sandboxed agentctl carry the marker too; they end with it
        for (const p of ownedProcesses(sessionDir(id))) if (p.comm !== 'bwrap') held.push({ what: `agentctl pid ${p.pid}`, recordedAs: String(p.pid) });
        return held;
      },
      async exposed(id) {
        const log = join(sessionDir(id), 'agentctl.log');
        return [...ownedProcesses(sessionDir(id)).map((p) => p.cmdline), existsSync(log) ? readFileSync(log, 'utf8') : ''].join('\n');
      },
      async close() {
        const leaked = killLeftovers(dataDir);
        cleanup(work);
        if (leaked > 0) throw new Error(`local executor contract: ${leaked} processes left running`);
      },
    };
  },
  [
    { case: 'failingSetup', reason: 'local profiles have no setup_script' },
    { case: 'watchInstance', reason: 'a local instance is healed on the next command that finds it unreachable' },
    { case: 'startSweeps', reason: 'a local launch creates nothing outside its session dir, which removeUnrecorded finds without a record' },
    { case: 'startPools', reason: 'a local launch starts a process in a directory: there is nothing to keep warm' },
  ],
);
