/**
 * Figure 9 of issue 11, the CLI itself: wall time of `berth version`, `berth --help`, `berth ls`
 * (BENCH_SESSIONS local sessions, default 20) and `berth exec ID -- true`, next to a bare
 * `node -e 0`, BENCH_RUNS times each (default 20), interleaved. Runs the built CLI
 * (BENCH_CLI, default bin/berth.js; serve and the setup always use bin/berth.js) as child processes against a real `berth serve` on a temp data
 * dir; BENCH_COMPARE=/other/bin/berth.js times another build's commands in the same run too
 * (rows marked [compare]). Writes bench/results/cli.json and the CLI section of BENCHMARKS.md. Measures only: nothing
 * here judges a time.
 * @module
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { writeCliSection, type CliResult } from './cli/report.js';
import { summarizeAll } from './k8s/stats.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = positiveInt(process.env.BENCH_RUNS, 20);
const SESSIONS = positiveInt(process.env.BENCH_SESSIONS, 20);
/** The CLI whose commands are timed; the serve and the setup commands always run this tree's bin/berth.js. */
const CLI = resolve(process.env.BENCH_CLI ?? join(ROOT, 'bin', 'berth.js'));
const SETUP_CLI = join(ROOT, 'bin', 'berth.js');
/** Another build's bin/berth.js (e.g. a copy of the tree before a change), timed in the same run, interleaved. */
const COMPARE_CLI = process.env.BENCH_COMPARE ? resolve(process.env.BENCH_COMPARE) : undefined;
const READY_TIMEOUT_MS = 120_000;

function positiveInt(raw: string | undefined, fallback: number): number {
  const n = Number.parseInt(raw ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

function gitRev(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

/** `berth ARGS` on the data dir, synchronously; throws with its output when it fails. */
function berth(dataDir: string, args: string[]): string {
  const r = spawnSync(process.execPath, [SETUP_CLI, '--data-dir', dataDir, ...args], { encoding: 'utf8', env: { ...process.env, BERTH_DATA_DIR: '' } });
  if (r.status !== 0) throw new Error(`berth ${args.join(' ')} exited with ${String(r.status)}: ${r.stderr.trim()}`);
  return r.stdout;
}

function makeRepo(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]): void => {
    execFileSync('git', ['-c', 'user.email=bench@example.com', '-c', 'user.name=bench', ...args], { cwd: dir, stdio: 'ignore' });
  };
  git('init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README.md'), '# cli bench\n');
  git('add', '.');
  git('commit', '-qm', 'init');
}

async function startServe(dataDir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [SETUP_CLI, 'serve', '--data-dir', dataDir, '--port', '0'], {
    env: { ...process.env, BERTH_LOG_LEVEL: 'warn', BERTH_DATA_DIR: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolveListening, reject) => {
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (/listening on http:\/\//.test(out)) resolveListening();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`berth serve exited with ${String(code)}:\n${out}`)));
  });
  return child;
}

async function stopServe(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  process.kill(child.pid, 'SIGTERM');
  await exited;
}

interface ListedSession {
  id: string;
  state: string;
  error?: { message?: string } | null;
}

/** Launches the sessions (their ids go into `ids` as they are created, for the cleanup) and waits until all are ready. */
async function launchSessions(dataDir: string, repo: string, ids: string[]): Promise<void> {
  for (let i = 0; i < SESSIONS; i++) {
    ids.push(berth(dataDir, ['launch', '--repo', repo, '--detach', '--env', 'BERTH_DEMO_STEP_MS=0']).trim());
  }
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const { sessions } = JSON.parse(berth(dataDir, ['ls', '-o', 'json'])) as { sessions: ListedSession[] };
    const notReady = sessions.filter((s) => s.state !== 'ready');
    if (notReady.length === 0 && sessions.length === SESSIONS) return;
    const failed = notReady.filter((s) => s.state === 'failed');
    if (failed.length > 0) throw new Error(`launch failed for ${failed.map((s) => s.id).join(', ')}: ${failed[0]?.error?.message ?? 'see berth status ID'}`);
    if (Date.now() > deadline) throw new Error(`sessions not ready after ${String(READY_TIMEOUT_MS)} ms: ${notReady.map((s) => `${s.id}=${s.state}`).join(', ')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Wall time of one child process, spawn to exit (ms); throws when it fails. */
function timeRun(label: string, args: string[]): number {
  const start = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', env: { ...process.env, BERTH_DATA_DIR: '' } });
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`${label} exited with ${String(r.status)}: ${r.stderr.trim()}`);
  return ms;
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing; run npm run build first (or set BENCH_CLI)`);
  const work = mkdtempSync(join(tmpdir(), 'berth-cli-bench-'));
  const dataDir = join(work, 'data');
  const repo = join(work, 'repo');
  makeRepo(repo);
  const loadStart = loadavg();
  console.log(`CLI ${CLI}: ${String(RUNS)} runs each, ${String(SESSIONS)} sessions; load average ${loadStart.map((l) => l.toFixed(2)).join(' ')} (a loaded machine gives noisy numbers: read them against node -e 0)`);
  const serve = await startServe(dataDir);
  const ids: string[] = [];
  try {
    await launchSessions(dataDir, repo, ids);
    const commands = (cli: string, suffix: string): Record<string, string[]> => ({
      [`berth version${suffix}`]: [cli, 'version'],
      [`berth --help${suffix}`]: [cli, '--help'],
      [`berth ls (${String(SESSIONS)} sessions)${suffix}`]: [cli, '--data-dir', dataDir, 'ls'],
      [`berth exec ID -- true${suffix}`]: [cli, '--data-dir', dataDir, 'exec', ids[0]!, '--', 'true'],
    });
    const cases: Record<string, string[]> = {
      'node -e 0': ['-e', '0'],
      ...commands(CLI, ''),
      ...(COMPARE_CLI ? commands(COMPARE_CLI, ' [compare]') : {}),
    };
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    // one warm-up round (page cache), not recorded
    for (const [label, args] of Object.entries(cases)) timeRun(label, args);
    for (let i = 0; i < RUNS; i++) {
      for (const [label, args] of Object.entries(cases)) samples[label]!.push(timeRun(label, args));
    }
    const summary = summarizeAll(samples);
    const result: CliResult = {
      at: new Date().toISOString(),
      machine: {
        node: process.version,
        platform: `${process.platform}-${process.arch}`,
        cpus: availableParallelism(),
        cpu_model: cpus()[0]?.model ?? 'unknown',
        mem_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
        loadavg_start: loadStart,
        loadavg_end: loadavg(),
      },
      berth_commit: gitRev(),
      setup: { runs: RUNS, sessions: SESSIONS, cli: CLI, ...(COMPARE_CLI ? { compare_cli: COMPARE_CLI } : {}) },
      samples_ms: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, v.map((x) => Math.round(x * 10) / 10)])),
      summary,
    };
    const dir = join(ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'cli.json'), `${JSON.stringify(result, null, 2)}\n`);
    writeCliSection(ROOT);
    console.table(summary);
    console.log('wrote bench/results/cli.json and the CLI section of BENCHMARKS.md');
  } finally {
    for (const id of ids) {
      try {
        berth(dataDir, ['rm', '--force', id]);
      } catch (err) {
        console.warn(`cleanup: ${(err as Error).message}`);
      }
    }
    await stopServe(serve);
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
