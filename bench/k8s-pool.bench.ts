/**
 * Warm pool and idle suspension on the test cluster (needs it running and
 * `eval "$(bash test/cluster/cluster.sh env)"`), all in one run against one controller in this
 * process, as the executor's ServiceAccount in a fresh restricted namespace:
 * 1. N sequential warm launches without a repository (BENCH_N, default 10) from a full pool of
 *    max(N, 10), each after the pool refilled; per-stage durations;
 * 2. the same from a repository pool (`pool: {repository: <the bench's git:// repository>}`, size 2):
 *    members keep a clone, a claim fetches and checks out;
 * 3. a burst of 10 warm launches at once from the full pool;
 * 4. a drained pool (size 1, its member just claimed) next to a cold launch of the same Pod + PVC
 *    on a profile without a pool, back to back and in turns first;
 * 5. the API-visible floor with a PVC (bench/k8s/floor.ts), one per cold launch, interleaved;
 * 6. N resumes of a suspended session (`idle: {suspend_after: 2s}`): `sendInput` wakes it → ready.
 * Around each warm launch and the burst, the whole machine's CPU time (bench/k8s/cpu.ts).
 * Writes bench/results/k8s-pool.json (every sample, machine info) and the pool section of
 * BENCHMARKS.md. Measures only: nothing here asserts a time. Everything is removed at the end
 * (berthOnCluster's close deletes the namespaces), also on failure.
 * @module
 */
import Database from 'better-sqlite3';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { VersionApi } from '@kubernetes/client-node';
import type { SessionView } from '../src/controller/service.js';
import { errorMessage } from '../src/shared/errors.js';
import { berthOnCluster, FAST_AGENT_ENV, imageTemplate, launchReady, ROOT, type BerthOnCluster } from '../test/k8s/support/berth.js';
import { clusterEnv } from '../test/k8s/support/env.js';
import { createTestRepo, type TestRepo } from '../test/k8s/support/git.js';
import { createTestNamespace, type TestNamespace } from '../test/k8s/support/namespace.js';
import { waitFor } from '../test/k8s/support/wait.js';
import { measureFloor } from './k8s/floor.js';
import { machineBusyMs } from './k8s/cpu.js';
import { benchMachine, berthCommit } from './k8s/machine.js';
import { writePoolSection, type PoolResult } from './k8s/pool-report.js';
import { summarizeAll } from './k8s/stats.js';

const N = Math.max(1, Number.parseInt(process.env.BENCH_N ?? '10', 10) || 10);
const BURST = 10;
const WARM_SIZE = Math.max(N, BURST);
/** The repository pool: members keep a clone of the bench's repository; a claim fetches and checks out. */
const REPO_POOL_SIZE = 2;
const SUSPEND_AFTER = '2s';
const STAGES = ['pool_claim', 'storage', 'pod_ready', 'bootstrap', 'agentctl_connect', 'agent_start'] as const;
const REFILL_TIMEOUT_MS = 300_000;

const env = clusterEnv();
const managed = { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } };

interface Run {
  h: BerthOnCluster;
  repo: TestRepo;
  floorNs: TestNamespace;
  samples: Record<string, number[]>;
  surprises: PoolResult['surprises'];
  /** The WarmLaunch / ColdLaunch diagnostic of each launch of a pooled profile, by session. */
  poolWords: Map<string, string>;
  launches: NonNullable<PoolResult['launches']>;
}

const add = (r: Run, k: string, v: number): void => void (r.samples[k] ??= []).push(v);
const isWarm = (v: SessionView): boolean => v.stages.some((s) => s.name === 'pool_claim' && s.status === 'succeeded');
const stageMs = (v: SessionView, name: string): number => v.stages.find((s) => s.name === name)?.durationMs ?? Number.NaN;

/** The pool's rows of `profile` by state, read from the controller's SQLite inventory. */
function poolStates(r: Run, profile: string): Record<string, number> {
  const db = new Database(join(r.h.dataDir, 'state', 'berth.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT state, count(*) AS n FROM pool_members WHERE profile = ? GROUP BY state').all(profile) as { state: string; n: number }[];
    return Object.fromEntries(rows.map((x) => [x.state, x.n]));
  } finally {
    db.close();
  }
}

/** Waits until `profile`'s pool holds exactly `size` ready members and nothing else. */
async function fullPool(r: Run, profile: string, size: number): Promise<void> {
  await waitFor(`${String(size)} ready members of ${profile}`, () => {
    const s = poolStates(r, profile);
    return (s.ready ?? 0) === size && Object.values(s).reduce((a, b) => a + b, 0) === size ? true : undefined;
  }, { timeoutMs: REFILL_TIMEOUT_MS, intervalMs: 100 });
}

/**
 * Where a launch's wall time went besides its stages' own durations: the stages' wall time with
 * overlaps counted once (a warm clone runs beside the connect), call → first stage start and last
 * stage end → settled (the stage clocks are the controller's Date, as is `epoch0`).
 */
function stageSpans(r: Run, figure: string, v: SessionView, epoch0: number, epoch1: number): void {
  const spans = v.stages
    .filter((st) => (STAGES as readonly string[]).includes(st.name) && st.endedAt !== null)
    .map((st) => [Date.parse(st.startedAt), Date.parse(st.endedAt!)] as const)
    .sort((a, b) => a[0] - b[0]);
  if (spans.length === 0) return;
  let union = 0;
  let [from, to] = spans[0]!;
  for (const [a, b] of spans.slice(1)) {
    if (a > to) {
      union += to - from;
      [from, to] = [a, b];
    } else to = Math.max(to, b);
  }
  union += to - from;
  add(r, `${figure}.span.stages_wall`, union);
  add(r, `${figure}.span.call_to_first_stage`, spans[0]![0] - epoch0);
  add(r, `${figure}.span.last_stage_to_settled`, epoch1 - Math.max(...spans.map((x) => x[1])));
}

/** One launch, timed from the call to `waitUntilSettled` returning ready; its stages recorded under `figure`. */
async function timedLaunch(r: Run, figure: string, req: Parameters<typeof launchReady>[1], t0 = performance.now()): Promise<SessionView> {
  const epoch0 = Date.now();
  const v = await launchReady(r.h.controller, req);
  add(r, `${figure}.total`, performance.now() - t0);
  stageSpans(r, figure, v, epoch0, Date.now());
  for (const st of STAGES) add(r, `${figure}.${st}`, stageMs(v, st));
  return v;
}

/** Notes a launch that went the other way than expected, with the launch's own words when it has them. */
function expectWarm(r: Run, figure: string, v: SessionView, warm: boolean): void {
  r.launches.push({ figure, session: v.id, warm: isWarm(v), diagnostic: r.poolWords.get(v.id) ?? null });
  if (isWarm(v) === warm) return;
  const why = r.poolWords.get(v.id) ?? v.stages.map((s) => `${s.name}:${s.status}`).join(' ');
  r.surprises.push({ figure, session: v.id, detail: `${warm ? 'cold' : 'warm'}; ${why}` });
  console.warn(`[${figure}] ${v.id} was ${warm ? 'cold' : 'warm'}: ${why}`);
}

/** Figures 1 and 2: N sequential warm launches each, from a full pool. */
async function warmSequential(r: Run, figure: 'warm' | 'warm_repo'): Promise<void> {
  for (let i = 0; i < N; i++) {
    const [profile, size] = figure === 'warm' ? ['warm', WARM_SIZE] : ['warm_repo', REPO_POOL_SIZE];
    await fullPool(r, profile, size);
    const cpu0 = machineBusyMs();
    const v = await timedLaunch(r, figure, { executor: profile, env: FAST_AGENT_ENV, ...(figure === 'warm_repo' ? { repository: { url: r.repo.url } } : {}) });
    add(r, `${figure}.machine_cpu_ms`, machineBusyMs() - cpu0);
    expectWarm(r, figure, v, true);
    await r.h.controller.remove(v.id);
    console.log(`[${figure} ${String(i + 1)}/${String(N)}] ${r.samples[`${figure}.total`]!.at(-1)!.toFixed(0)} ms${isWarm(v) ? '' : ' (cold)'}`);
  }
}

/** Figure 3: BURST warm launches at once from a full pool. */
async function warmBurst(r: Run): Promise<void> {
  await fullPool(r, 'warm', WARM_SIZE);
  const cpu0 = machineBusyMs();
  const wall0 = performance.now();
  const settled = await Promise.allSettled(
    Array.from({ length: BURST }, async () => {
      const v = await timedLaunch(r, 'burst', { executor: 'warm', env: FAST_AGENT_ENV });
      expectWarm(r, 'burst', v, true);
      return v.id;
    }),
  );
  add(r, 'burst.machine_cpu_ms', machineBusyMs() - cpu0);
  add(r, 'burst.wall_ms', performance.now() - wall0);
  for (const s of settled) if (s.status === 'rejected') r.surprises.push({ figure: 'burst', session: '-', detail: `failed: ${errorMessage(s.reason).slice(0, 300)}` });
  await Promise.allSettled(settled.flatMap((s) => (s.status === 'fulfilled' ? [r.h.controller.remove(s.value)] : [])));
  console.log(`[burst] ${String(r.samples['burst.total']?.length ?? 0)}/${String(BURST)} ready: ${(r.samples['burst.total'] ?? []).map((x) => x.toFixed(0)).join(' ')} ms`);
}

/** Figures 4 and 5: a drained pool's launch, a cold one and the floor with a PVC, N times interleaved. */
async function coldAndDrained(r: Run): Promise<void> {
  await fullPool(r, 'warm', WARM_SIZE); // the burst's refill is over: it does not weigh on these
  for (let i = 0; i < N; i++) {
    await fullPool(r, 'drained', 1);
    const holder = await timedLaunch(r, 'drained_holder', { executor: 'drained', env: FAST_AGENT_ENV });
    expectWarm(r, 'drained_holder', holder, true);
    const states = poolStates(r, 'drained');
    add(r, 'drained.members_creating_at_launch', states.creating ?? 0);
    // the drained launch and the cold one back to back, in turns first, both right after the
    // holder's claim: the same cluster state for both (no member is made while either runs: the
    // pools wait for every launch)
    const runDrained = async (): Promise<SessionView> => {
      const v = await timedLaunch(r, 'drained', { executor: 'drained', env: FAST_AGENT_ENV });
      expectWarm(r, 'drained', v, false);
      return v;
    };
    const runCold = (): Promise<SessionView> => timedLaunch(r, 'cold', { executor: 'cold', env: FAST_AGENT_ENV });
    const [drained, cold] = i % 2 === 0 ? [await runDrained(), await runCold()] : await runCold().then(async (c) => [await runDrained(), c] as const);
    await Promise.all([holder, drained, cold].map((v) => r.h.controller.remove(v.id)));
    await fullPool(r, 'drained', 1); // its refill is over before the next
    try {
      const f = await measureFloor(r.h.admin, r.floorNs.name, env.agentImage, `floor-pvc-${String(i)}`, true);
      add(r, 'floor.api.pvc', f.apiMs);
      add(r, 'floor.real.pvc', f.realMs);
    } catch (err) {
      r.surprises.push({ figure: 'floor', session: `floor-pvc-${String(i)}`, detail: errorMessage(err).slice(0, 300) });
    }
    const last = (k: string): string => r.samples[k]?.at(-1)?.toFixed(0) ?? '-';
    console.log(`[cold ${String(i + 1)}/${String(N)}] drained ${last('drained.total')} ms, cold ${last('cold.total')} ms, floor api ${last('floor.api.pvc')} ms`);
  }
}

/** Figure 6: one session of the idle profile, suspended and woken by input N times. */
async function resumeSuspended(r: Run): Promise<void> {
  const c = r.h.controller;
  const v = await launchReady(c, { executor: 'idle', env: FAST_AGENT_ENV, name: 'sleeper' });
  try {
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      await waitFor('the session suspended', async () => ((await c.get(v.id)).state === 'suspended' ? true : undefined), { timeoutMs: 120_000, intervalMs: 100 });
      add(r, 'resume.ready_to_suspended_observed', performance.now() - t);
      const t0 = performance.now();
      const epoch0 = Date.now();
      await c.sendInput(v.id, 'x\n');
      const after = await c.waitUntilSettled(v.id);
      add(r, 'resume.total', performance.now() - t0);
      stageSpans(r, 'resume', after, epoch0, Date.now());
      if (after.state !== 'ready') throw new Error(`session ${v.id} is ${after.state} after the wake: ${after.error?.message ?? ''}`);
      for (const st of STAGES) add(r, `resume.${st}`, stageMs(after, st));
      console.log(`[resume ${String(i + 1)}/${String(N)}] ${r.samples['resume.total']!.at(-1)!.toFixed(0)} ms`);
    }
  } finally {
    await c.remove(v.id).catch((err: unknown) => console.error(`rm ${v.id}: ${errorMessage(err)}`));
  }
}

async function main(): Promise<void> {
  const loadStart = loadavg();
  const repo = await createTestRepo('pool-bench', { 'README.md': '# pool bench\n' });
  const h = await berthOnCluster({
    prefix: 'pool-bench',
    profiles: { warm: managed, warm_repo: managed, drained: managed, cold: managed, idle: managed },
    profileFields: {
      warm: { pool: { size: WARM_SIZE } },
      warm_repo: { pool: { size: REPO_POOL_SIZE, repository: repo.url } },
      drained: { pool: { size: 1 } },
      idle: { idle: { suspend_after: SUSPEND_AFTER } },
    },
  });
  const version = await h.admin.makeApiClient(VersionApi).getCode();
  let floorNs: TestNamespace | undefined;
  const r: Run = { h, repo, floorNs: undefined as unknown as TestNamespace, samples: {}, surprises: [], poolWords: new Map(), launches: [] };
  h.controller.subscribe((e) => {
    if (e.type === 'diagnostic' && (e.reason === 'WarmLaunch' || e.reason === 'ColdLaunch')) r.poolWords.set(e.sessionId, `${e.reason}: ${e.message}`);
  });
  const onSignal = (sig: NodeJS.Signals): void => {
    console.error(`${sig}: cleaning up`);
    void Promise.allSettled([h.close(), floorNs?.cleanup(), repo.remove()]).finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    floorNs = await createTestNamespace(h.admin, 'pool-floor', { podSecurity: 'restricted' });
    r.floorNs = floorNs;
    await fullPool(r, 'warm_repo', REPO_POOL_SIZE); // made before the figures: no refill of it weighs on them
    await warmSequential(r, 'warm');
    await warmSequential(r, 'warm_repo');
    await warmBurst(r);
    await coldAndDrained(r);
    await resumeSuspended(r);
  } finally {
    await h.close().catch((err: unknown) => console.error(`close: ${errorMessage(err)}`));
    await floorNs?.cleanup().catch(() => undefined);
    await repo.remove().catch(() => undefined);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const summary = summarizeAll(Object.fromEntries(Object.entries(r.samples).map(([k, v]) => [k, v.filter(Number.isFinite)])));
  console.table(summary);
  const out: PoolResult = {
    at: new Date().toISOString(),
    machine: benchMachine(ROOT, version.gitVersion, loadStart),
    berth_commit: berthCommit(ROOT),
    setup: {
      n: N,
      burst: BURST,
      warm_pool_size: WARM_SIZE,
      drained_pool_size: 1,
      suspend_after: SUSPEND_AFTER,
      profile: 'agent image, managed PVC 1Gi, as the executor ServiceAccount in a restricted namespace',
      agent: 'demo agent, BERTH_DEMO_STEP_MS=0',
    },
    surprises: r.surprises,
    launches: r.launches,
    samples: r.samples,
    summary,
  };
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'k8s-pool.json'), `${JSON.stringify(out, null, 2)}\n`);
  writePoolSection(ROOT);
  console.log('wrote bench/results/k8s-pool.json and the pool section of BENCHMARKS.md');
}

await main();
