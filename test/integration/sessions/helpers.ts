/**
 * Shared fixtures of the session integration tests: the agentctl bundle (built if missing, then
 * copied so a concurrent rebuild cannot tear it), temp git repositories, controllers, output helpers
 * and a leak check that finds every agentctl started for a data dir.
 * @module
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { resolveConfig, findInstallRoot } from '../../../src/config/index.js';
import { createController, type Controller } from '../../../src/controller/index.js';
import { OWNER_ENV } from '../../../src/executors/local/index.js';

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

/** Builds dist/agentctl.cjs when missing and returns a private copy of it. */
export function agentctlBundle(workDir: string): string {
  const built = join(ROOT, 'dist', 'agentctl.cjs');
  if (!existsSync(built)) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'ignore' });
  const copy = join(workDir, 'agentctl.cjs');
  copyFileSync(built, copy);
  return copy;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `berth-it-${prefix}-`));
}

/** A git repository with a README, a BERTH_MARKER file holding `marker`, and one commit on `main`. */
export function makeRepo(parent: string, name: string, marker: string): string {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README.md'), `# ${name}\n\nA test repository.\n`);
  writeFileSync(join(dir, 'BERTH_MARKER'), `${marker}\n`);
  git('add', '.');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'init');
  return dir;
}

/** Config with the built-in defaults plus test agents. */
export function testConfig(extraAgents: Record<string, { command: string[] }> = {}, raw: Record<string, unknown> = {}) {
  return resolveConfig({ ...raw, agents: extraAgents }, { source: null, installRoot: findInstallRoot(join(ROOT, 'src', 'config')) });
}

export async function startController(dataDir: string, agentctlPath: string, extraAgents: Record<string, { command: string[] }> = {}): Promise<Controller> {
  const c = await createController({ dataDir, agentctlPath, config: testConfig(extraAgents), env: {} });
  await c.recover();
  return c;
}

/** The demo agent without pauses. */
export const FAST_AGENT_ENV = { BERTH_DEMO_STEP_MS: '0' };

/** Follows the agent output until `pattern` matches the text so far; returns the text. */
export async function waitForOutput(c: Controller, id: string, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  const signal = AbortSignal.timeout(timeoutMs);
  let text = '';
  for await (const chunk of c.logs(id, { follow: true, signal })) {
    text += Buffer.from(chunk.data).toString('utf8');
    if (pattern.test(text)) return text;
  }
  throw new Error(`output of ${id} ended without matching ${pattern}:\n${text}`);
}

/** Everything the agent has printed so far. */
export async function outputSoFar(c: Controller, id: string): Promise<string> {
  let text = '';
  for await (const chunk of c.logs(id, {})) text += Buffer.from(chunk.data).toString('utf8');
  return text;
}

export async function execText(c: Controller, id: string, argv: string[], stdin?: string): Promise<{ exitCode: number | null; stdout: string }> {
  let stdout = '';
  const res = await c.exec(id, argv, { ...(stdin !== undefined ? { stdin } : {}), onOutput: (ch) => (stdout += ch.stream === 'stdout' ? Buffer.from(ch.data).toString() : '') });
  return { exitCode: res.exitCode, stdout };
}

/** One live process as the test helpers look at it (read lazily: most are skipped on the first field). */
export interface LiveProcess {
  pid: number;
  comm: () => string;
  argv: () => string[];
  environ: () => string[];
}

/** Pids of the live (not zombie) processes `match` accepts; a process that goes or cannot be read is skipped. */
export function liveProcesses(match: (p: LiveProcess) => boolean): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const at = (file: string, enc: BufferEncoding = 'utf8'): string => readFileSync(`/proc/${name}/${file}`, enc);
    const split = (text: string): string[] => text.split('\0').filter((e) => e !== '');
    try {
      const stat = at('stat');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const proc = { pid: Number(name), comm: () => at('comm').trim(), argv: () => split(at('cmdline')), environ: () => split(at('environ', 'latin1')) };
      if (match(proc)) out.push(proc.pid);
    } catch {
      // gone or not readable
    }
  }
  return out;
}

/** Pids of live agentctl processes started for sessions under `dataDir` (by their owner marker). */
export function agentctlPids(dataDir: string): number[] {
  // the bwrap processes around a sandboxed agentctl carry its marker too; they end with it
  return liveProcesses((p) => p.environ().some((e) => e.startsWith(`${OWNER_ENV}=${dataDir}/`)) && p.comm() !== 'bwrap');
}

/** Live demo agents whose workspace lies under `dir`. */
export function processesWithCwd(dir: string): number[] {
  return liveProcesses((p) => p.argv().includes('demo-agent') && p.environ().some((e) => e.startsWith(`BERTH_WORKSPACE=${dir}`)));
}

/** Puts back the process environment variables `saved` holds (undefined: the variable was unset). */
export function restoreEnv(saved: Readonly<Record<string, string | undefined>>): void {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}

/** Kills every agentctl (and demo agent) left for `dataDir`; returns how many were found. */
export function killLeftovers(dataDir: string): number {
  const pids = [...agentctlPids(dataDir), ...processesWithCwd(join(dataDir, 'workspaces'))];
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return pids.length;
}

export function cleanup(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The afterAll of a session suite: force-removes every session of `c`, closes it, kills and counts
 * leftover processes for `dataDir`, removes `work`, then expects that nothing leaked.
 */
export async function teardownController(c: Controller | undefined, dataDir: string, work: string, leakMessage?: string): Promise<void> {
  for (const s of (await c?.list()) ?? []) await c!.remove(s.id, { force: true });
  await c?.close();
  const leaked = killLeftovers(dataDir);
  cleanup(work);
  expect(leaked, leakMessage).toBe(0);
}

export async function until<T>(fn: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
