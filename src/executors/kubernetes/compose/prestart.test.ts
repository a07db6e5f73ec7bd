import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { authEnv, runtimeEnv, serializeEnvFile } from './env-file.js';
import type { BootstrapPaths } from './paths.js';
import { startScript } from './start-script.js';
import { IDENTITY, tempRoots } from '../testing/compose-fixtures.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A value the env parser must give back byte for byte: quotes, a newline, `$`, a backslash. */
const TRICKY = `it's "quoted"\n$HOME \\ 'twice'`;

/** The volumes as the bootstrap leaves them for the bundle flavor; the stand-in agentctl prints how it runs. */
function bundleBootstrap(opts: { plan?: boolean; prepared?: boolean; authExtra?: string } = {}): BootstrapPaths {
  const t = tempRoots('berth-prestart-');
  dirs.push(t.dir);
  const p = t.paths;
  writeFileSync(p.runtimeEnv, serializeEnvFile({ ...runtimeEnv(IDENTITY, 'bundle', p), BERTH_TRICKY: TRICKY }));
  writeFileSync(p.authEnv, serializeEnvFile(authEnv(p)) + (opts.authExtra ?? ''));
  writeFileSync(p.prepareScript, 'echo prepare ran >>"$BERTH_WORKSPACE/prepare-count"\n');
  if (opts.prepared !== false) writeFileSync(p.prepareInExecMarker, '');
  mkdirSync(dirname(p.agentctlLauncher), { recursive: true });
  const main = `${p.runtimeDir}/main.cjs`;
  writeFileSync(main, 'console.log(JSON.stringify({ pid: process.pid, ppid: process.ppid, argv: process.argv.slice(1), tricky: process.env.BERTH_TRICKY, home: process.env.HOME }))\n');
  writeFileSync(p.agentctlLauncher, `#!/bin/sh\nexec node ${main} launcher "$@"\n`, { mode: 0o755 });
  if (opts.plan !== false) writeFileSync(p.agentctlPrestart, JSON.stringify({ main, args: ['from-plan'] }));
  return p;
}

/**
 * Whether the pre-start in process `pid` waits for the marker: it has its inotify watch (made after
 * its signal handlers; before them, a SIGTERM during Node's boot ends it by the default action).
 */
function watching(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === 'anon_inode:inotify';
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/** Resolves once the pre-started node waits for the marker. */
async function untilWatching(pid: number): Promise<void> {
  while (!watching(pid)) await new Promise((r) => setTimeout(r, 10));
}

interface Ran {
  code: number | null;
  pid: number;
  out: { pid: number; ppid: number; argv: string[]; tricky?: string; home?: string } | null;
  stderr: string;
}

/** Runs the start command like the container does (`sh -c`), writes the marker once it runs, and reads what agentctl printed. */
async function runStart(p: BootstrapPaths, beforeMarker?: (pid: number) => void): Promise<Ran> {
  const child = spawn('/bin/sh', ['-c', startScript(p)], { env: { PATH: process.env.PATH } });
  let out = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  if (beforeMarker) beforeMarker(child.pid ?? 0);
  else {
    await untilWatching(child.pid ?? 0);
    writeFileSync(p.startMarker, '');
  }
  const code = await exited;
  return { code, pid: child.pid ?? 0, out: out === '' ? null : (JSON.parse(out) as Ran['out']), stderr };
}

describe('the Node pre-start of the start command', () => {
  it('runs the planned agentctl in the process the container started (still PID 1 there), with the env files exactly', async () => {
    const p = bundleBootstrap();
    const r = await runStart(p);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.out?.pid, 'sh exec-ed node, which ran agentctl itself').toBe(r.pid);
    expect(r.out?.argv).toEqual([`${p.runtimeDir}/main.cjs`, 'from-plan']);
    expect(r.out?.tricky).toBe(TRICKY);
    expect(r.out?.home).toBe(p.home);
  });

  it('falls back to the shell start command when prepare.sh has not run (it runs it, then the launcher)', async () => {
    const p = bundleBootstrap({ prepared: false });
    const r = await runStart(p);
    expect(r.code).toBe(0);
    expect(r.out?.ppid, 'agentctl runs as a child of the pre-start').toBe(r.pid);
    expect(r.out?.argv).toEqual([`${p.runtimeDir}/main.cjs`, 'launcher']);
    expect(r.out?.tricky).toBe(TRICKY);
  });

  it('falls back when there is no plan (the SEA flavor) or an env file it does not read exactly as sh would', async () => {
    for (const p of [bundleBootstrap({ plan: false }), bundleBootstrap({ authExtra: '# a comment line\n' })]) {
      const r = await runStart(p);
      expect(r.code).toBe(0);
      expect(r.out?.argv).toEqual([`${p.runtimeDir}/main.cjs`, 'launcher']);
      expect(r.out?.tricky).toBe(TRICKY);
    }
  });

  it('goes the shell way at once when the marker is already there (a container restart)', async () => {
    const p = bundleBootstrap();
    writeFileSync(p.startMarker, '');
    const r = await runStart(p, () => undefined);
    expect(r.code).toBe(0);
    expect(r.out?.argv).toEqual([`${p.runtimeDir}/main.cjs`, 'launcher']);
  });

  it('exits 143 on SIGTERM while it waits for the marker (a Pod deleted before its bootstrap stops at once)', async () => {
    const p = bundleBootstrap();
    const r = await runStart(p, (pid) => void untilWatching(pid).then(() => process.kill(pid, 'SIGTERM')));
    expect(r.code).toBe(143);
    expect(r.out).toBeNull();
  });
});
