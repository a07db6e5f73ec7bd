/**
 * A real `berth serve` child process for the fleet benchmark (bench/k8s-fleet.bench.ts): started
 * from dist/berth.js with a loopback-only inspector (`--inspect=127.0.0.1:0`, as
 * test/k8s/soak.test.ts does) so the benchmark can ask V8 for a full GC and read the heap that
 * survives it; its VmRSS and CPU ticks read from /proc. Nothing here judges a number.
 * @module
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { heapAfterGcMiB } from '../../test/k8s/support/inspector.js';

export { heapAfterGcMiB };

export interface ServeChild {
  child: ChildProcess;
  pid: number;
  /** The inspector's WebSocket URL (loopback only). */
  inspector: string;
  /** performance.now() when spawn was called, and when serve printed its "listening" line. */
  spawnedAt: number;
  listeningAt: number;
  /** The last lines serve wrote (stdout and stderr), for an error message. */
  tail(): string;
}

/**
 * Spawns `node --inspect=127.0.0.1:0 CLI serve --data-dir DIR --port 0` and resolves once it
 * listens (serve recovers the inventory's sessions before it opens its API). Its output is kept
 * draining for the whole life of the process.
 */
export function startServe(cli: string, dataDir: string, cwd: string, timeoutMs = 300_000): Promise<ServeChild> {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, ['--inspect=127.0.0.1:0', cli, 'serve', '--data-dir', dataDir, '--port', '0'], {
    cwd,
    env: { ...process.env, BERTH_LOG_LEVEL: 'warn', BERTH_DATA_DIR: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const tail = (): string => out.split('\n').slice(-40).join('\n');
  return new Promise((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => fail(new Error(`berth serve did not listen within ${String(timeoutMs)} ms:\n${tail()}`)), timeoutMs);
    const fail = (err: Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (child.exitCode === null && child.pid !== undefined) child.kill('SIGKILL');
      reject(err);
    };
    const onData = (d: Buffer): void => {
      out = (out + d.toString()).slice(-20_000);
      if (done) return;
      const inspector = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[0-9a-f-]+)/.exec(out)?.[1];
      if (inspector && /listening on http:\/\/127\.0\.0\.1:\d+/.test(out) && child.pid !== undefined) {
        done = true;
        clearTimeout(timer);
        resolve({ child, pid: child.pid, inspector, spawnedAt, listeningAt: performance.now(), tail });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`berth serve exited (${String(code ?? signal)}):\n${tail()}`)));
  });
}

/** SIGKILL, as a crash would; resolves once the process is gone. */
export async function killServe(s: ServeChild): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => s.child.once('exit', () => resolve()));
  process.kill(s.pid, 'SIGKILL');
  await exited;
}

/** VmRSS of a local process, KiB. */
export function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${String(pid)}/status`, 'utf8'));
  return m ? Number(m[1]) : Number.NaN;
}

/** utime + stime of a local process from /proc/PID/stat, in clock ticks. */
export function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
  // fields after "(comm) ": state is field 3, utime 14, stime 15 (1-based)
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Clock ticks per second (`getconf CLK_TCK`, 100 when that fails). */
export function clockTicksPerSecond(): number {
  try {
    const n = Number.parseInt(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim(), 10);
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
}
