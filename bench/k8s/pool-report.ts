/**
 * The "Warm pool and idle suspension" section of BENCHMARKS.md, from bench/results/k8s-pool.json
 * (written by bench/k8s-pool.bench.ts). `poolTargets` computes the table of targets (pure),
 * `poolSection` renders the section (pure), `writePoolSection` puts it into BENCHMARKS.md with
 * `upsertSection`, leaving the rest of the file alone. Every number comes from the result file.
 * @module
 */
import { writeResultSection, type BenchMachine } from './machine.js';
import { pct, type Row } from './stats.js';

export const POOL_HEADING = '## Warm pool and idle suspension — `npm run bench:pool`';

export interface PoolResult {
  at: string;
  machine: BenchMachine;
  berth_commit: string;
  setup: { n: number; burst: number; warm_pool_size: number; drained_pool_size: number; suspend_after: string; profile: string; agent: string };
  /** Launches that should have been warm (or cold) and were not, per figure, with why when known. */
  surprises: { figure: string; session: string; detail: string }[];
  /** Every launch of a pooled profile: warm or not, and its WarmLaunch / ColdLaunch diagnostic. */
  launches?: { figure: string; session: string; warm: boolean; diagnostic: string | null }[];
  /** Every sample, ms (per-stage samples are named `<figure>.<stage>`). */
  samples: Record<string, number[]>;
  summary: Row[];
}

/** One row of the targets table: the measured value, the target and whether it was met. */
export interface TargetRow {
  figure: string;
  measured: string;
  target: string;
  met: boolean | null;
}

const ms = (v: number): string => (Number.isFinite(v) ? `${String(Math.round(v))} ms` : '–');
const ratio = (v: number): string => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '–');
const verdict = (ok: boolean, value: number): boolean | null => (Number.isFinite(value) ? ok : null);

/** The six figures against the issue's targets, from the samples. */
export function poolTargets(s: Record<string, number[]>): TargetRow[] {
  const p = (k: string, q = 50): number => pct(s[k] ?? [], q);
  const warm = p('warm.total');
  const warmRepo = p('warm_repo.total');
  const burst95 = p('burst.total', 95);
  const burstRatio = burst95 / warm;
  const drained = p('drained.total');
  const cold = p('cold.total');
  const drainedRatio = drained / cold;
  const floor = p('floor.api.pvc');
  const coldRatio = cold / floor;
  const resume = p('resume.total');
  return [
    { figure: 'warm launch, no repository → ready, p50 (p95)', measured: `${ms(warm)} (${ms(p('warm.total', 95))})`, target: '≤ 100 ms', met: verdict(warm <= 100, warm) },
    { figure: 'warm launch from a repository pool (fetch + checkout) → ready, p50 (p95)', measured: `${ms(warmRepo)} (${ms(p('warm_repo.total', 95))})`, target: '≤ 150 ms', met: verdict(warmRepo <= 150, warmRepo) },
    {
      figure: `burst of ${String(s['burst.total']?.length ?? 0)} warm launches: p95 / single warm p50 (burst p50, p95)`,
      measured: `${ratio(burstRatio)} (${ms(p('burst.total'))}, ${ms(burst95)})`,
      target: '≤ 2×',
      met: verdict(burstRatio <= 2, burstRatio),
    },
    { figure: 'drained pool launch p50 / cold launch p50 (drained, cold)', measured: `${ratio(drainedRatio)} (${ms(drained)}, ${ms(cold)})`, target: '≤ 1.1×', met: verdict(drainedRatio <= 1.1, drainedRatio) },
    { figure: 'cold launch p50 / API-visible floor with PVC p50 (cold, floor)', measured: `${ratio(coldRatio)} (${ms(cold)}, ${ms(floor)})`, target: '≤ 1.0', met: verdict(coldRatio <= 1, coldRatio) },
    {
      figure: 'resume of a suspended session → ready, p50 (p95)',
      measured: `${ms(resume)} (${ms(p('resume.total', 95))})`,
      target: `≤ floor + 300 ms = ${ms(floor + 300)}`,
      met: verdict(resume <= floor + 300, resume + floor),
    },
  ];
}

function table(header: string[], rows: string[][]): string[] {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)];
}

const STAGE_FIGURES: readonly [string, string][] = [
  ['warm', 'warm, no repository'],
  ['warm_repo', 'warm, repository pool'],
  ['burst', 'warm burst'],
  ['drained', 'drained pool (cold)'],
  ['cold', 'cold, no pool'],
  ['resume', 'resume of a suspended session'],
];
const int = (v: number): string => (Number.isFinite(v) ? String(Math.round(v)) : '–');

const STAGES = ['pool_claim', 'storage', 'pod_ready', 'bootstrap', 'agentctl_connect', 'agent_start'] as const;
const SPANS = ['stages_wall', 'call_to_first_stage', 'last_stage_to_settled'] as const;

/**
 * p50 of every stage per figure (ms; – where the figure has no such stage); the stages' wall time
 * with overlaps counted once, call → first stage and last stage → settled; the total's p50 and p95.
 */
export function stageRows(s: Record<string, number[]>): string[][] {
  return STAGE_FIGURES.filter(([k]) => (s[`${k}.total`]?.length ?? 0) > 0).map(([k, label]) => [
    label,
    String(s[`${k}.total`]?.length ?? 0),
    ...STAGES.map((st) => int(pct((s[`${k}.${st}`] ?? []).filter(Number.isFinite), 50))),
    ...SPANS.map((sp) => int(pct((s[`${k}.span.${sp}`] ?? []).filter(Number.isFinite), 50))),
    int(pct(s[`${k}.total`] ?? [], 50)),
    int(pct(s[`${k}.total`] ?? [], 95)),
  ]);
}

/** The machine's CPU around the warm launches and the burst: what bounds a burst on this machine. */
function cpuLine(s: Record<string, number[]>, cpus: number): string {
  const one = pct(s['warm.machine_cpu_ms'] ?? [], 50);
  const burstCpu = pct(s['burst.machine_cpu_ms'] ?? [], 50);
  const wall = pct(s['burst.wall_ms'] ?? [], 50);
  if (![one, burstCpu, wall].every(Number.isFinite)) return '';
  const busy = burstCpu / (wall * cpus);
  return `**CPU.** The whole machine (the controller, the test cluster's API server, kubelet and containerd, the Pods) spent ${int(one)} ms of CPU during a single warm launch (p50, from /proc/stat, 10 ms ticks), and ${int(burstCpu)} ms during the burst, whose ${int(wall)} ms of wall time on ${String(cpus)} CPUs it kept ${(busy * 100).toFixed(0)} % busy. A burst of ${String(s['burst.total']?.length ?? 0)} cannot end before its CPU is spent: ${int(burstCpu / cpus)} ms at the least on ${String(cpus)} CPUs.`;
}

export function poolSection(r: PoolResult): string {
  const m = r.machine;
  const load = (l: number[]): string => l.map((v) => v.toFixed(2)).join(' / ');
  const rows = poolTargets(r.samples).map((t) => [t.figure, t.measured, t.target, t.met === null ? 'no data' : t.met ? 'met' : '**missed**']);
  const surprises = r.surprises.length === 0 ? 'Every launch that should have been warm was warm (a `pool_claim` stage that succeeded), and every drained-pool launch was cold.' : `Launches that went the other way than expected: ${r.surprises.map((x) => `${x.figure} ${x.session} (${x.detail})`).join('; ')}.`;
  return [
    POOL_HEADING,
    '',
    `Run of ${r.at}: N = ${String(r.setup.n)}, burst of ${String(r.setup.burst)}; ${r.setup.profile}; ${r.setup.agent}; Kubernetes ${m.kubernetes}, client-node ${m.client_node}; Node ${m.node} on ${m.platform}, ${String(m.cpus)} CPUs (${m.cpu}), ${String(m.memory_gib)} GiB; load average ${load(m.loadavg_at_start)} at start, ${load(m.loadavg_at_end)} at the end; Berth ${r.berth_commit}. The machine is shared with the test cluster and other work: the numbers are noisy.`,
    '',
    ...table(['figure', 'measured', 'target', ''], rows),
    '',
    '**Stages (ms, p50 unless named)**',
    '',
    ...table(['launch', 'n', ...STAGES, 'stages, wall', 'call → first stage', 'last stage → settled', 'total p50', 'total p95'], stageRows(r.samples)),
    '',
    '*stages, wall* is the time the stages cover with overlaps counted once (a warm launch clones while it connects); *call → first stage* and *last stage → settled* are the controller\'s own time around them (the launch call, the inventory, the settle), read from the stages\' timestamps (whole milliseconds of the controller\'s clock).',
    '',
    surprises,
    '',
    cpuLine(r.samples, m.cpus),
    '',
    `What was measured, all in one run, against one controller in this process (the executor's ServiceAccount in a fresh restricted namespace). *Warm*: a profile with \`pool: {size: ${String(r.setup.warm_pool_size)}}\` (managed PVC); before each of the N sequential launches the bench waits until the inventory's \`pool_members\` holds ${String(r.setup.warm_pool_size)} ready rows, so each launch finds a full pool; the time is the launch call → \`waitUntilSettled\` returned \`ready\`, and a launch counts as warm when its view has a \`pool_claim\` stage that succeeded. Then the same from a repository pool: a profile with \`pool: {size: 2, repository: URL}\` of a one-commit git:// repository, whose members keep a clone (the launch asks for the same URL, so its claim fetches and checks out instead of cloning); and a burst of ${String(r.setup.burst)} launches at once from the full pool (each launch's own call → ready). *Drained*: a profile with \`pool: {size: ${String(r.setup.drained_pool_size)}}\` whose one member a first launch has just claimed; *cold*: the same Pod and PVC on a profile without a pool, run right before or right after the drained launch (in turns), so both meet the cluster in the same state (no member is made while either runs: the pools wait for every launch of the executor, and refill after); the *API-visible floor* is a sleeping Pod with a fresh 1Gi PVC created with client-node as the admin kubeconfig (create call → the watch event that shows it running), one per cold launch, interleaved. *Resume*: one session of a profile with \`idle: {suspend_after: ${r.setup.suspend_after}}\`, N times: wait until it is \`suspended\` (Pod deleted, PVC kept), then time \`sendInput(id, 'x\\n')\` (which wakes it: a new Pod on the kept volume) → \`waitUntilSettled\` ready. Measures only: nothing here asserts a time.`,
    '',
    'Reproduce: `eval "$(bash test/cluster/cluster.sh env)" && npm run bench:pool` (needs dist/ from `npm run build` and the running test cluster; BENCH_N, default 10). Every sample is in bench/results/k8s-pool.json.',
  ].join('\n');
}

/** Writes the pool section into `root`/BENCHMARKS.md from bench/results/k8s-pool.json (if that exists). */
export function writePoolSection(root: string): void {
  writeResultSection(root, 'k8s-pool', POOL_HEADING, poolSection);
}
