/**
 * Helpers for the CLI integration tests: build the bundle if missing, run the real built CLI as
 * a child process, and run an in-process API server over the fake session service.
 * @module
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServe, type ServeHandle } from '../../../src/server/serve.js';
import { FakeSessions, type FakeSessionsOptions } from '../../support/fake-sessions.js';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const CLI = join(ROOT, 'dist', 'berth.js');

/** Builds dist/ when the CLI bundle is missing. */
export function ensureBuilt(): void {
  if (existsSync(CLI) && existsSync(join(ROOT, 'dist', 'berth-front.cjs')) && existsSync(join(ROOT, 'dist', 'agentctl.cjs'))) return;
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stdout}\n${r.stderr}`);
}

/** A git repository with one commit on `main` holding a README titled `title`. */
export function makeRepo(dir: string, title = 'demo'): void {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]): void => {
    execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: dir, stdio: 'ignore' });
  };
  git('init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README.md'), `# ${title}\n`);
  git('add', '.');
  git('commit', '-qm', 'init');
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/berth.js ARGS` (asynchronously, so in-process servers keep answering). */
export function runCli(args: string[], opts: { dataDir?: string; input?: string; env?: Record<string, string>; cwd?: string } = {}): Promise<CliResult> {
  const full = opts.dataDir ? ['--data-dir', opts.dataDir, ...args] : args;
  const child = spawn(process.execPath, [CLI, ...full], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, BERTH_DATA_DIR: '', ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(opts.input ?? '');
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** An in-process `berth serve` equivalent over FakeSessions, writing serve.json/api-token into `dataDir`. */
export async function startFakeServe(dataDir: string, opts: FakeSessionsOptions = {}): Promise<{ handle: ServeHandle; fake: FakeSessions }> {
  const fake = new FakeSessions(opts);
  const handle = await startServe({ dataDir, port: 0, version: 'test', createService: async () => fake });
  return { handle, fake };
}

/** Starts the real `berth serve` as a child process; resolves with its port once it listens. */
export async function startServeProcess(
  dataDir: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; port: number; output: () => string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dataDir, '--port', '0', ...args], {
    cwd: ROOT,
    env: { ...process.env, BERTH_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (): void => {
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`berth serve exited with ${code}:\n${out}`)));
  });
  return { child, port, output: () => out };
}

/** A test's teardown: `berth rm --force` of every session serve still lists, then serve stopped. */
export async function removeSessionsAndStop(dataDir: string, serve: ChildProcess | undefined): Promise<void> {
  const left = await runCli(['ls', '-o', 'json'], { dataDir });
  if (left.code === 0) {
    for (const s of (JSON.parse(left.stdout) as { sessions: { id: string }[] }).sessions) await runCli(['rm', '--force', s.id], { dataDir });
  }
  await stopProcess(serve);
}

/** Stops a child process by its pid (SIGTERM, then SIGKILL) and waits for it to exit. */
export async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
  }, 10_000);
  await exited;
  clearTimeout(timer);
}

/** Polls `check` (every 200 ms, up to `ms`) until it returns a value other than undefined; the error names `what`. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
