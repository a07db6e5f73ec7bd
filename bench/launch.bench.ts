/**
 * Launch benchmark of the embedded default (local executor, built-in demo agent, SQLite inventory),
 * driving the controller in-process on a temp data dir and a small temp git repository:
 *  - N sequential launches (BENCH_N, default 20): launch → ready, total and per stage, then the first
 *    agent output byte after ready (via `logs`), then rm;
 *  - 10 concurrent launches: wall time until all are ready, per-launch time;
 *  - controller RSS (this process) idle with the 10 sessions ready, agentctl RSS per session;
 *  - controller restart with the 10 sessions: close, create, `recover()`, then `exec` on all;
 *  - stop → resume, and rm.
 * Writes bench/results/launch.json and prints tables. No assertions: this measures, it does not judge.
 * @module
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createController, type Controller, type SessionState, type SessionView } from '../src/controller/index.js';
import { agentctlPids, killLeftovers, makeRepo, ROOT, waitForOutput } from '../test/integration/sessions/helpers.js';

const N = positiveInt(process.env.BENCH_N, 20);
const CONCURRENT = 10;
const STAGES = ['workspace', 'agentctl_start', 'agentctl_connect', 'agent_start'] as const;
/** The demo agent without its 2 s pauses between steps, so it idles at its prompt quickly (first byte is printed before the first pause either way). */
const AGENT_ENV = { BERTH_DEMO_STEP_MS: '0' };
const TIMEOUT_MS = 60_000;

function positiveInt(raw: string | undefined, fallback: number): number {
  const n = Number.parseInt(raw ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

// ---- statistics -------------------------------------------------------------------------------

interface Stats {
  n: number;
  p50: number;
  p90: number;
  max: number;
  mean: number;
}

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

const round = (n: number): number => Math.round(n * 10) / 10;

function stats(samples: readonly number[]): Stats {
  if (samples.length === 0) return { n: 0, p50: NaN, p90: NaN, max: NaN, mean: NaN };
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    max: round(sorted[sorted.length - 1] as number),
    mean: round(sorted.reduce((a, b) => a + b, 0) / sorted.length),
  };
}

function stageDurations(views: readonly SessionView[]): Record<string, Stats> {
  const out: Record<string, Stats> = {};
  for (const name of STAGES) {
    const samples: number[] = [];
    for (const v of views) {
      // the last record of the stage belongs to the most recent launch/resume
      const record = [...v.stages].reverse().find((s) => s.name === name);
      if (record?.durationMs !== null && record?.durationMs !== undefined) samples.push(record.durationMs);
    }
    out[name] = stats(samples);
  }
  return out;
}

// ---- process memory ---------------------------------------------------------------------------

function rssKiB(pid: number | 'self'): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : NaN;
  } catch {
    return NaN;
  }
}

const mib = (kib: number): number => Math.round((kib / 1024) * 10) / 10;

// ---- state timing -----------------------------------------------------------------------------

/**
 * Timestamps (performance.now()) of the state events of one controller, taken synchronously as the
 * controller emits them, so "ready" is the moment the session became ready, not when we looked.
 */
class StateClock {
  readonly #events = new Map<string, Array<{ state: SessionState; t: number; error: string | null }>>();
  readonly #waiters = new Set<() => void>();
  readonly #unsubscribe: () => void;

  constructor(c: Controller) {
    this.#unsubscribe = c.subscribe((event) => {
      if (event.type !== 'state') return;
      const list = this.#events.get(event.sessionId) ?? [];
      list.push({ state: event.state, t: performance.now(), error: event.error?.message ?? null });
      this.#events.set(event.sessionId, list);
      for (const wake of [...this.#waiters]) wake();
    });
  }

  /** Time of the first `ready` of session `id` at or after `since`; rejects if it fails first. */
  ready(id: string, since: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`session ${id} not ready after ${TIMEOUT_MS} ms`));
      }, TIMEOUT_MS);
      const check = (): void => {
        for (const e of this.#events.get(id) ?? []) {
          if (e.t < since) continue;
          if (e.state === 'ready' || e.state === 'failed') {
            clearTimeout(timer);
            this.#waiters.delete(check);
            if (e.state === 'ready') resolve(e.t);
            else reject(new Error(`session ${id} failed: ${e.error ?? 'unknown error'}`));
            return;
          }
        }
      };
      this.#waiters.add(check);
      check();
    });
  }

  close(): void {
    this.#unsubscribe();
  }
}

// ---- steps ------------------------------------------------------------------------------------

interface LaunchSample {
  id: string;
  /** launch() call until it resolved (session recorded, launch running in the background). */
  callMs: number;
  /** launch() call until the `ready` state event. */
  readyMs: number;
  readyAt: number;
}

async function launchOne(c: Controller, clock: StateClock, repo: string, i: number): Promise<LaunchSample> {
  const t0 = performance.now();
  const view = await c.launch({ repository: { path: repo }, env: AGENT_ENV, prompt: `bench ${i}` });
  const callMs = performance.now() - t0;
  const readyAt = await clock.ready(view.id, t0);
  return { id: view.id, callMs, readyMs: readyAt - t0, readyAt };
}

/** From `readyAt` until the first chunk of the agent's output arrives through `logs`. */
async function firstOutputAfter(c: Controller, id: string, readyAt: number): Promise<number> {
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  for await (const chunk of c.logs(id, { from: 0, follow: true, signal })) {
    if (chunk.data.byteLength > 0) return performance.now() - readyAt;
  }
  throw new Error(`agent output of ${id} ended before any byte`);
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---- main -------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const load = loadavg().map((l) => Math.round(l * 100) / 100);
  if (!existsSync(join(ROOT, 'dist', 'agentctl.cjs'))) {
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  }
  const work = mkdtempSync(join(tmpdir(), 'berth-bench-launch-'));
  const dataDir = join(work, 'data');
  const repo = makeRepo(work, 'repo', 'bench-marker');
  // The embedded default: no berth.yaml, so the built-in config (local executor, dist/agentctl.cjs, demo agent).
  const open = (): Promise<Controller> => createController({ dataDir, env: {} });

  let c: Controller | undefined;
  let clock: StateClock | undefined;
  try {
    c = await open();
    await c.recover();
    clock = new StateClock(c);
    await sleep(200);
    const rssControllerBaseline = rssKiB('self');

    // 1. sequential launches, first output byte after ready, rm
    console.log(`sequential: ${N} launches …`);
    const seq: LaunchSample[] = [];
    const seqViews: SessionView[] = [];
    const firstOutput: number[] = [];
    const rmMs: number[] = [];
    for (let i = 0; i < N; i++) {
      const sample = await launchOne(c, clock, repo, i);
      seq.push(sample);
      firstOutput.push(await firstOutputAfter(c, sample.id, sample.readyAt));
      seqViews.push(await c.get(sample.id));
      const session = c;
      rmMs.push((await timed(() => session.remove(sample.id))).ms);
    }

    // 2. concurrent launches
    console.log(`concurrent: ${CONCURRENT} launches at once …`);
    const session = c;
    const sessionClock = clock;
    const conc = await timed(() => Promise.all(Array.from({ length: CONCURRENT }, (_, i) => launchOne(session, sessionClock, repo, 100 + i))));
    const concWallMs = Math.max(...conc.value.map((s) => s.readyMs));
    const concViews = await Promise.all(conc.value.map((s) => session.get(s.id)));
    const ids = conc.value.map((s) => s.id);

    // 3. RSS with the 10 sessions ready and their agents idle at the prompt
    await Promise.all(ids.map((id) => waitForOutput(session, id, /ready for instructions/)));
    await sleep(1000);
    const rssControllerIdle = rssKiB('self');
    const pids = agentctlPids(dataDir);
    const agentctlRss = pids.map((pid) => rssKiB(pid)).filter((v) => Number.isFinite(v));

    // 4. controller restart with the 10 ready sessions
    console.log(`restart: close + create + recover with ${ids.length} ready sessions …`);
    clock.close();
    clock = undefined;
    const closeMs = (await timed(() => session.close())).ms;
    c = undefined;
    const t0 = performance.now();
    const created = await timed(open);
    c = created.value;
    const recovered = c;
    clock = new StateClock(c);
    const recoverMs = (await timed(() => recovered.recover())).ms;
    const afterRecover = performance.now();
    const execAt = await Promise.all(
      ids.map(async (id) => {
        const res = await recovered.exec(id, ['true']);
        if (res.exitCode !== 0) throw new Error(`exec true in ${id} exited ${String(res.exitCode)}`);
        return performance.now();
      }),
    );
    const execAllFromRestart = Math.max(...execAt) - t0;
    const execAllAfterRecover = Math.max(...execAt) - afterRecover;
    const statesAfter = await Promise.all(ids.map(async (id) => (await recovered.get(id)).state));

    // 5. stop → resume on each of the 10 sessions, one at a time
    console.log(`stop → resume: ${ids.length} sessions …`);
    const stopMs: number[] = [];
    const resumeMs: number[] = [];
    const resumeClock = clock;
    for (const id of ids) {
      stopMs.push((await timed(() => recovered.stop(id))).ms);
      const tr = performance.now();
      await recovered.resume(id);
      resumeMs.push((await resumeClock.ready(id, tr)) - tr);
    }
    const resumeViews = await Promise.all(ids.map((id) => recovered.get(id)));

    // 6. rm the 10 (ready) sessions, one at a time
    console.log(`rm: ${ids.length} sessions …`);
    const rmFinalMs: number[] = [];
    for (const id of ids) rmFinalMs.push((await timed(() => recovered.remove(id))).ms);

    const result = {
      at: startedAt,
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      cpus: availableParallelism(),
      loadavg_at_start: { '1m': load[0], '5m': load[1], '15m': load[2] },
      setup: { executor: 'local (embedded default)', agent: 'demo', agent_env: AGENT_ENV, repository: 'temp git repo, 1 commit, 2 files', n_sequential: N, n_concurrent: CONCURRENT },
      sequential: {
        launch_to_ready_ms: stats(seq.map((s) => s.readyMs)),
        launch_call_ms: stats(seq.map((s) => s.callMs)),
        stages_ms: stageDurations(seqViews),
        first_output_byte_after_ready_ms: stats(firstOutput),
      },
      concurrent: {
        sessions: CONCURRENT,
        wall_to_all_ready_ms: round(concWallMs),
        wall_incl_call_ms: round(conc.ms),
        per_launch_ms: stats(conc.value.map((s) => s.readyMs)),
        stages_ms: stageDurations(concViews),
      },
      restart: {
        sessions: ids.length,
        close_ms: round(closeMs),
        create_controller_ms: round(created.ms),
        recover_ms: round(recoverMs),
        exec_all_after_recover_ms: round(execAllAfterRecover),
        exec_all_from_restart_ms: round(execAllFromRestart),
        states_after_recover: statesAfter,
      },
      stop_resume: {
        sessions: ids.length,
        stop_ms: stats(stopMs),
        resume_to_ready_ms: stats(resumeMs),
        resume_stages_ms: stageDurations(resumeViews),
      },
      rm_ms: {
        ready_after_first_output: stats(rmMs),
        ready_after_resume: stats(rmFinalMs),
        all: stats([...rmMs, ...rmFinalMs]),
      },
      rss_kib: {
        controller_process_baseline: rssControllerBaseline,
        controller_process_idle_10_ready: rssControllerIdle,
        agentctl_processes: agentctlRss.length,
        agentctl_per_session: stats(agentctlRss),
      },
    };

    const dir = join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'launch.json'), `${JSON.stringify(result, null, 2)}\n`);

    console.log(`\nnode ${process.version}, ${result.cpus} CPUs, load average at start ${load.join(' / ')}; N=${N}`);
    const row = (name: string, s: Stats) => ({ measure: name, n: s.n, 'p50 ms': s.p50, 'p90 ms': s.p90, 'max ms': s.max, 'mean ms': s.mean });
    console.table([
      row('launch → ready (sequential)', result.sequential.launch_to_ready_ms),
      ...STAGES.map((name) => row(`  stage ${name}`, result.sequential.stages_ms[name] as Stats)),
      row('  launch() call returns', result.sequential.launch_call_ms),
      row('ready → first agent output byte', result.sequential.first_output_byte_after_ready_ms),
      row(`concurrent x${CONCURRENT}: per launch → ready`, result.concurrent.per_launch_ms),
      ...STAGES.map((name) => row(`  stage ${name}`, result.concurrent.stages_ms[name] as Stats)),
      row('stop', result.stop_resume.stop_ms),
      row('resume → ready', result.stop_resume.resume_to_ready_ms),
      row('rm (ready session)', result.rm_ms.all),
    ]);
    console.table([
      { measure: `concurrent x${CONCURRENT}: wall to all ready`, ms: result.concurrent.wall_to_all_ready_ms },
      { measure: `restart x${ids.length}: close()`, ms: result.restart.close_ms },
      { measure: `restart x${ids.length}: createController()`, ms: result.restart.create_controller_ms },
      { measure: `restart x${ids.length}: recover()`, ms: result.restart.recover_ms },
      { measure: `restart x${ids.length}: exec works on all, after recover`, ms: result.restart.exec_all_after_recover_ms },
      { measure: `restart x${ids.length}: exec works on all, from restart`, ms: result.restart.exec_all_from_restart_ms },
    ]);
    const a = result.rss_kib.agentctl_per_session;
    console.table([
      { process: 'controller (this process), before any launch', 'RSS MiB': mib(rssControllerBaseline) },
      { process: `controller (this process), idle with ${ids.length} ready`, 'RSS MiB': mib(rssControllerIdle) },
      { process: `agentctl per session (n=${a.n}) p50`, 'RSS MiB': mib(a.p50) },
      { process: `agentctl per session (n=${a.n}) max`, 'RSS MiB': mib(a.max) },
    ]);
    console.log('wrote bench/results/launch.json');
  } finally {
    clock?.close();
    if (c) {
      const ctl = c;
      for (const s of await ctl.list().catch(() => [])) await ctl.remove(s.id, { force: true }).catch(() => undefined);
      await ctl.close().catch(() => undefined);
    }
    const leaked = killLeftovers(dataDir);
    if (leaked > 0) console.warn(`killed ${leaked} leftover process(es)`);
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
