/**
 * Figures 5 and 7 of issue 11 on the test cluster (needs it running and
 * `eval "$(bash test/cluster/cluster.sh env)"`), through a real `berth serve` child process
 * (dist/berth.js, as users run it) on a temp data dir whose berth.yaml has a kubernetes executor
 * as the executor's ServiceAccount in a fresh restricted namespace, driven with the typed API client:
 * - footprint: serve's VmRSS and its JS heap after a full GC (loopback inspector) with 0, N/2 and N
 *   connected ready sessions (BENCH_SESSIONS, default 20; demo agent without pauses, managed PVC,
 *   launched at most 5 at a time); serve's CPU while idle with N sessions (BENCH_IDLE_S, default
 *   30 s); agentctl's VmRSS in each Pod;
 * - recovery: SIGKILL serve, start it again on the same data dir; per session, spawn → `get` says
 *   ready and `exec true` returns 0; the time until all did; whether any agent was started again.
 *   BENCH_ROUNDS times (default 3).
 * Writes bench/results/k8s-fleet.json and the fleet section of BENCHMARKS.md. Measures only:
 * nothing here asserts a time. Every session, serve (by its PID) and the namespace are removed at
 * the end, also on failure.
 * @module
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, VersionApi } from '@kubernetes/client-node';
import type { BerthClient } from '../src/api/api-client.js';
import { clientForDataDir } from '../src/server/node-client.js';
import { CLI, stopProcess } from '../test/integration/cli/helpers.js';
import { FAST_AGENT_ENV, imageTemplate, labelledLeftovers, ROOT, writeClusterConfig } from '../test/k8s/support/berth.js';
import { clusterEnv } from '../test/k8s/support/env.js';
import { loadKubeConfig } from '../test/k8s/support/kube.js';
import { createTestNamespace, type TestNamespace } from '../test/k8s/support/namespace.js';
import { createExecutorServiceAccount, type ServiceAccountAccess } from '../test/k8s/support/service-account.js';
import { agentctlRssFromPs, cpuPercent, writeFleetSection, type FleetResult, type FootprintPoint, type RecoveryRound } from './k8s/fleet-report.js';
import { clockTicksPerSecond, cpuTicks, heapAfterGcMiB, killServe, rssKiB, startServe, type ServeChild } from './k8s/serve-child.js';
import { benchMachine, berthCommit } from './k8s/machine.js';
import { summarizeAll } from './k8s/stats.js';

const SESSIONS = positiveInt(process.env.BENCH_SESSIONS, 20);
const ROUNDS = positiveInt(process.env.BENCH_ROUNDS, 3);
const IDLE_S = positiveInt(process.env.BENCH_IDLE_S, 30);
const LAUNCH_CONCURRENCY = 5;
/** Pause after the sessions settled, before a memory reading. */
const SETTLE_S = 5;
const READY_TIMEOUT_MS = 300_000;
const RECOVERY_TIMEOUT_MS = 300_000;

function positiveInt(raw: string | undefined, fallback: number): number {
  const n = Number.parseInt(raw ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** Runs `fn` over `items`, at most `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const worker = async (): Promise<void> => {
    for (let it = queue.shift(); it !== undefined; it = queue.shift()) await fn(it);
  };
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker));
}

/** Polls the session (every 250 ms) until it leaves `launching`; throws unless it is ready. */
async function waitReady(client: BerthClient, id: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const v = await client.get(id);
    if (v.state === 'ready') return;
    if (v.state !== 'launching') throw new Error(`session ${id} is ${v.state}: ${v.error?.message ?? '(no error)'}`);
    if (Date.now() > deadline) throw new Error(`session ${id} still launching after ${String(READY_TIMEOUT_MS)} ms`);
    await sleep(250);
  }
}

/** VmRSS (KiB) of agentctl in the session's Pod, read from /proc through an exec. */
async function agentctlRss(client: BerthClient, id: string): Promise<number> {
  const script = [
    'for d in /proc/[0-9]*; do',
    '  p=${d#/proc/}; [ "$p" = "$$" ] && continue',
    '  c=$(tr "\\0" " " < "$d/cmdline" 2>/dev/null) || continue',
    '  r=$(sed -n "s/^VmRSS:[^0-9]*\\([0-9]*\\).*/\\1/p" "$d/status" 2>/dev/null)',
    '  [ -n "$r" ] && echo "$p|$r|$c"',
    'done; true',
  ].join('\n');
  let out = '';
  const dec = new TextDecoder();
  await client.exec(id, { argv: ['sh', '-c', script] }, { onOutput: (c) => (out += c.stream === 'stdout' ? dec.decode(c.data) : '') });
  return agentctlRssFromPs(out);
}

/** Spawn → the session answered get (ready) and `exec true` (exit 0), ms; NaN after the deadline. */
async function servedAfter(client: BerthClient, id: string, t0: number): Promise<number> {
  const deadline = t0 + RECOVERY_TIMEOUT_MS;
  while (performance.now() < deadline) {
    try {
      const v = await client.get(id);
      if (v.state === 'ready') {
        const r = await client.exec(id, { argv: ['true'] });
        if (r.exitCode === 0) return performance.now() - t0;
      }
    } catch {
      // not reconnected yet: try again
    }
    await sleep(100);
  }
  return Number.NaN;
}

async function main(): Promise<void> {
  for (const f of [CLI, join(ROOT, 'dist', 'agentctl.cjs')]) if (!existsSync(f)) throw new Error(`${f} is missing: run npm run build first`);
  const env = clusterEnv();
  const admin = loadKubeConfig(env.kubeconfig);
  const core = admin.makeApiClient(CoreV1Api);
  const version = await admin.makeApiClient(VersionApi).getCode();
  const loadStart = loadavg();
  const samples: Record<string, number[]> = {};
  const add = (k: string, v: number): void => void (samples[k] ??= []).push(v);
  const footprint: FootprintPoint[] = [];
  const rounds: RecoveryRound[] = [];
  const actlRss: number[] = [];
  let idleCpu = Number.NaN;
  const idleDetail = { ticks: Number.NaN, clk_tck: Number.NaN, window_ms: Number.NaN, serve_ticks_since_start: Number.NaN };

  let ns: TestNamespace | undefined;
  let sa: ServiceAccountAccess | undefined;
  let serve: ServeChild | undefined;
  const ids: string[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'berth-fleet-bench-'));
  const client = (): BerthClient => {
    const c = clientForDataDir(dataDir);
    if (!c) throw new Error('berth serve wrote no serve.json');
    return c;
  };

  let cleaned: Promise<void> | undefined;
  const cleanup = (): Promise<void> =>
    (cleaned ??= (async () => {
      try {
        if (ids.length > 0) {
          if (!serve || serve.child.exitCode !== null || serve.child.signalCode !== null) serve = await startServe(CLI, dataDir, ROOT).catch(() => undefined);
          if (serve) {
            const c = client();
            await pool(ids, LAUNCH_CONCURRENCY, async (id) => {
              await c.remove(id).catch(() => c.remove(id, { force: true }).catch((err: unknown) => console.error(`rm ${id}: ${String(err)}`)));
            });
          }
        }
        if (ns) {
          const left = await labelledLeftovers(core, ns.name).catch(() => []);
          if (left.length > 0) console.error(`left after rm (the namespace deletion takes them): ${left.join(', ')}`);
        }
      } finally {
        if (serve) await stopProcess(serve.child);
        await sa?.cleanup().catch(() => undefined);
        await ns?.cleanup().catch((err: unknown) => console.error(`namespace cleanup: ${String(err)}`));
        rmSync(dataDir, { recursive: true, force: true });
      }
    })());
  const onSignal = (sig: NodeJS.Signals): void => {
    console.error(`${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  /** serve's RSS (KiB) and heap after a full GC (MiB), SETTLE_S after the last change. */
  const memory = async (s: ServeChild): Promise<{ rss: number; heap: number }> => {
    await sleep(SETTLE_S * 1000);
    const heap = await heapAfterGcMiB(s.inspector);
    await sleep(500);
    return { rss: rssKiB(s.pid), heap };
  };
  const point = async (s: ServeChild, n: number): Promise<void> => {
    const m = await memory(s);
    footprint.push({ sessions: n, rss_kib: m.rss, heap_mib: Math.round(m.heap * 1000) / 1000 });
    add(`footprint.rss_kib.${String(n)}_sessions`, m.rss);
    add(`footprint.heap_mib.${String(n)}_sessions`, m.heap);
    console.log(`[footprint] ${String(n)} sessions: serve RSS ${(m.rss / 1024).toFixed(1)} MiB, heap after GC ${m.heap.toFixed(1)} MiB`);
  };
  const launchUpTo = async (total: number): Promise<void> => {
    const c = client();
    const todo = Array.from({ length: total - ids.length }, (_, i) => ids.length + i);
    await pool(todo, LAUNCH_CONCURRENCY, async (i) => {
      const t0 = performance.now();
      const v = await c.launch({ executor: 'k8s', env: FAST_AGENT_ENV, name: `fleet-${String(i + 1)}` });
      ids.push(v.id);
      await waitReady(c, v.id);
      add('launch_ms', performance.now() - t0);
    });
    console.log(`[launch] ${String(ids.length)} sessions ready`);
  };

  try {
    ns = await createTestNamespace(admin, 'fleet', { podSecurity: 'restricted' });
    sa = await createExecutorServiceAccount(admin, ns.name);
    writeClusterConfig(dataDir, sa, {
      prefix: 'fleet',
      profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
    });
    serve = await startServe(CLI, dataDir, ROOT);
    add('serve_start_0_sessions_ms', serve.listeningAt - serve.spawnedAt);

    // figure 7: footprint with 0, N/2 and N connected ready sessions
    await point(serve, 0);
    const half = Math.floor(SESSIONS / 2);
    if (half > 0 && half < SESSIONS) {
      await launchUpTo(half);
      await point(serve, half);
    }
    await launchUpTo(SESSIONS);
    await point(serve, SESSIONS);

    // idle CPU with N sessions: no API call during the window
    const tck = clockTicksPerSecond();
    const ticks0 = cpuTicks(serve.pid);
    const w0 = performance.now();
    await sleep(IDLE_S * 1000);
    const ticksEnd = cpuTicks(serve.pid);
    const ticks = ticksEnd - ticks0;
    const windowMs = performance.now() - w0;
    idleCpu = cpuPercent(ticks, tck, windowMs);
    Object.assign(idleDetail, { ticks, clk_tck: tck, window_ms: Math.round(windowMs), serve_ticks_since_start: ticksEnd });
    add('idle_cpu_pct', idleCpu);
    console.log(`[idle] serve CPU ${idleCpu.toFixed(2)} % of one core over ${String(IDLE_S)} s (${String(ticks)} ticks at ${String(tck)}/s)`);

    // agentctl's VmRSS in every Pod
    const c = client();
    await pool(ids, LAUNCH_CONCURRENCY, async (id) => {
      const kib = await agentctlRss(c, id);
      actlRss.push(kib);
      add('agentctl_rss_kib', kib);
    });
    console.log(`[agentctl] VmRSS KiB: ${actlRss.join(' ')}`);

    // figure 5: SIGKILL serve with N ready sessions, start it again, time until each serves an exec
    for (let round = 1; round <= ROUNDS; round++) {
      const before = new Map<string, string | undefined>();
      for (const v of await client().list()) before.set(v.id, v.agentProcess?.id);
      await killServe(serve);
      serve = await startServe(CLI, dataDir, ROOT);
      const t0 = serve.spawnedAt;
      const rc = client();
      const per = await Promise.all(ids.map((id) => servedAfter(rc, id, t0)));
      const ok = per.filter(Number.isFinite);
      const after = await rc.list();
      const rerun = after.filter((v) => before.get(v.id) !== v.agentProcess?.id).length;
      const notRunning = after.filter((v) => v.agentProcess?.status !== 'running').length;
      const mem = await memory(serve);
      const r: RecoveryRound = {
        round,
        listen_ms: serve.listeningAt - t0,
        per_session_ms: ok,
        all_ms: ok.length === per.length ? Math.max(...per) : Number.NaN,
        agents_rerun: rerun,
        agents_not_running: notRunning,
        failed: per.length - ok.length,
        rss_mib_after: mem.rss / 1024,
        heap_mib_after: mem.heap,
      };
      rounds.push(r);
      add('recovery.listen_ms', r.listen_ms);
      for (const v of ok) add('recovery.session_ms', v);
      if (Number.isFinite(r.all_ms)) add('recovery.all_ms', r.all_ms);
      console.log(
        `[recovery ${String(round)}/${String(ROUNDS)}] listening ${r.listen_ms.toFixed(0)} ms, all ${String(ok.length)}/${String(per.length)} served by ${r.all_ms.toFixed(0)} ms; agents re-run ${String(rerun)}, not running ${String(notRunning)}; RSS ${r.rss_mib_after.toFixed(1)} MiB, heap ${r.heap_mib_after.toFixed(1)} MiB`,
      );
    }
  } finally {
    await cleanup();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  const summary = summarizeAll(samples);
  console.table(summary);
  const out: FleetResult = {
    at: new Date().toISOString(),
    machine: benchMachine(ROOT, version.gitVersion, loadStart),
    berth_commit: berthCommit(ROOT),
    setup: {
      sessions: SESSIONS,
      rounds: ROUNDS,
      launch_concurrency: LAUNCH_CONCURRENCY,
      idle_window_s: IDLE_S,
      settle_s: SETTLE_S,
      profile: 'agent image, managed PVC 1Gi, no repository, as the executor ServiceAccount in a restricted namespace',
      agent: 'demo agent, BERTH_DEMO_STEP_MS=0',
      serve: 'a `berth serve` child process (dist/berth.js, --inspect=127.0.0.1:0, BERTH_LOG_LEVEL=warn)',
    },
    footprint,
    idle_cpu_pct: idleCpu,
    idle_cpu: idleDetail,
    agentctl_rss_kib: actlRss,
    rounds,
    samples,
    summary,
  };
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'k8s-fleet.json'), `${JSON.stringify(out, null, 2)}\n`);
  writeFleetSection(ROOT);
  console.log('wrote bench/results/k8s-fleet.json and the fleet section of BENCHMARKS.md');
}

await main();
