/**
 * What an agent could read: runs node — the program agentctl runs as — inside the sandbox a launch
 * builds (or unconfined, like an unsandboxed agent) over candidate paths, and returns those that
 * can really be read. Used by `berth doctor`.
 * @module
 */
import { spawnSync } from 'node:child_process';
import { bwrapArgs, type SandboxPlan } from './sandbox.js';

/**
 * Reads each path of stdin's JSON `paths`: a file counts when a byte can be read from it, a directory
 * when some file below it (a bounded walk) can. Empty mount points left by the sandbox do not count,
 * nor does what the walk finds in the agent's own directories (`own`: its workspace, state dir and
 * private home, reached when walking the data dir around them).
 */
const PROBE_SCRIPT = `
const fs = require('node:fs');
const path = require('node:path');
let budget = 5000;
function readable(p, depth) {
  if (--budget < 0) return false;
  let st;
  try { st = fs.statSync(p); } catch { return false; }
  if (st.isFile()) {
    try {
      const fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      try { return fs.readSync(fd, Buffer.alloc(1), 0, 1, 0) > 0; } finally { fs.closeSync(fd); }
    } catch { return false; }
  }
  if (!st.isDirectory() || depth > 4 || (depth > 0 && own.includes(p))) return false;
  let names;
  try { names = fs.readdirSync(p); } catch { return false; }
  return names.slice(0, 200).some((n) => readable(path.join(p, n), depth + 1));
}
const { paths, own } = JSON.parse(fs.readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(paths.filter((p) => readable(p, 0))));
`;

interface ReadProbeOptions {
  /** Run inside bwrap with this plan; null runs unconfined. */
  plan: SandboxPlan | null;
  /** The environment of the probe (HOME as the agent would have it). */
  env: NodeJS.ProcessEnv;
  /** @default 'bwrap' */
  bwrap?: string;
}

/** The paths among `paths` the probe could read. Throws when the probe itself could not run. */
export function probeReadablePaths(paths: readonly string[], opts: ReadProbeOptions): string[] {
  const command = [process.execPath, '-e', PROBE_SCRIPT];
  const [file, args] = opts.plan === null ? [process.execPath, command.slice(1)] : [opts.bwrap ?? 'bwrap', [...bwrapArgs(opts.plan), '--', ...command]];
  const input = JSON.stringify({ paths, own: opts.plan?.writable ?? [] });
  const r = spawnSync(file, args, { input, encoding: 'utf8', env: opts.env, timeout: 30_000, maxBuffer: 4 * 1024 * 1024 });
  if (r.error !== undefined || r.status !== 0) {
    const why = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n')[0] ?? '';
    throw new Error(`the read probe${opts.plan === null ? '' : ' in the sandbox'} failed: ${why}`);
  }
  const out: unknown = JSON.parse(r.stdout);
  if (!Array.isArray(out) || !out.every((p): p is string => typeof p === 'string')) throw new Error('the read probe answered nonsense');
  return out;
}
