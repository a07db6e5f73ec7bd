/**
 * The "Fleet: recovery and footprint" section of BENCHMARKS.md (figures 5 and 7 of issue 11),
 * from bench/results/k8s-fleet.json (written by bench/k8s-fleet.bench.ts). `fleetSection`
 * renders it (pure); `writeFleetSection` puts it into BENCHMARKS.md with `upsertSection`, leaving
 * the rest of the file alone. Every number comes from the result file.
 * @module
 */
import { writeResultSection, type BenchMachine } from './machine.js';
import { pct, type Row } from './stats.js';

export const FLEET_HEADING = '## Fleet: recovery and footprint — `npm run bench:fleet`';

/** One kill → restart of serve with every session ready. */
export interface RecoveryRound {
  round: number;
  /** spawn → serve's "listening" line (serve reconnects the sessions before it opens its API). */
  listen_ms: number;
  /** spawn → this session answered get (ready) and then `exec true` (exit 0), per session. */
  per_session_ms: number[];
  /** spawn → the last session did. */
  all_ms: number;
  /** Sessions whose agent process id changed over the restart (the agent was started again). */
  agents_rerun: number;
  /** Sessions whose agent is not `running` after the restart. */
  agents_not_running: number;
  /** Sessions that did not serve an exec before the deadline. */
  failed: number;
  /** serve's VmRSS and JS heap after a full GC once all were served. */
  rss_mib_after: number;
  heap_mib_after: number;
}

export interface FootprintPoint {
  sessions: number;
  /** serve's VmRSS, KiB. */
  rss_kib: number;
  /** serve's JS heap in use after a full GC, MiB. */
  heap_mib: number;
}

export interface FleetResult {
  at: string;
  machine: BenchMachine;
  berth_commit: string;
  setup: { sessions: number; rounds: number; launch_concurrency: number; idle_window_s: number; settle_s: number; profile: string; agent: string; serve: string };
  footprint: FootprintPoint[];
  idle_cpu_pct: number;
  /** The idle window's raw figures: utime+stime ticks in it, ticks per second, its wall time, and serve's ticks since it started. */
  idle_cpu: { ticks: number; clk_tck: number; window_ms: number; serve_ticks_since_start: number };
  /** VmRSS (KiB) of agentctl in each session's Pod. */
  agentctl_rss_kib: number[];
  rounds: RecoveryRound[];
  /** Every sample (ms unless the name says otherwise). */
  samples: Record<string, number[]>;
  summary: Row[];
}

/** CPU time over a wall-clock window, as % of one core. */
export function cpuPercent(ticks: number, ticksPerSecond: number, wallMs: number): number {
  return wallMs > 0 ? (ticks / ticksPerSecond / (wallMs / 1000)) * 100 : Number.NaN;
}

/** Parses the VmRSS (KiB) of agentctl's process from lines `pid|rssKiB|cmdline` (PID 1 or the lowest agentctl pid that is not the agent). */
export function agentctlRssFromPs(lines: string): number {
  const ps = lines
    .split('\n')
    .filter((l) => l.includes('|'))
    .map((l) => {
      const [pid, rss, ...rest] = l.split('|');
      return { pid: Number(pid), rss: Number(rss), cmd: rest.join('|') };
    })
    .filter((p) => /agentctl/.test(p.cmd) && !/demo-agent/.test(p.cmd))
    .sort((a, b) => a.pid - b.pid);
  return ps[0]?.rss ?? Number.NaN;
}

const num = (v: number, digits = 0): string => (Number.isFinite(v) ? (digits === 0 ? String(Math.round(v)) : v.toFixed(digits)) : '–');

function table(header: string[], rows: string[][]): string[] {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)];
}

export function fleetSection(r: FleetResult): string {
  const fp = (n: number): FootprintPoint | undefined => r.footprint.find((f) => f.sessions === n);
  const f0 = fp(0);
  const kib = (f: FootprintPoint, k: 'rss_mib' | 'heap_mib'): number => (k === 'rss_mib' ? f.rss_kib : f.heap_mib * 1024);
  const perSession = (a: FootprintPoint | undefined, b: FootprintPoint | undefined, k: 'rss_mib' | 'heap_mib'): string =>
    a && b && b.sessions > a.sessions ? num((kib(b, k) - kib(a, k)) / (b.sessions - a.sessions)) : '–';
  const footRows = r.footprint.map((f) => [String(f.sessions), num(f.rss_kib / 1024, 1), num(f.heap_mib, 1)]);
  const steps = r.footprint.slice(1).map((b, i) => [r.footprint[i]!, b] as const);
  const costRows = [
    ...(f0 && r.footprint.length > 1 ? [[`per session, 0 → ${String(r.footprint.at(-1)!.sessions)} (KiB)`, perSession(f0, r.footprint.at(-1), 'rss_mib'), perSession(f0, r.footprint.at(-1), 'heap_mib')]] : []),
    ...steps.map(([a, b]) => [`per session, ${String(a.sessions)} → ${String(b.sessions)} (KiB)`, perSession(a, b, 'rss_mib'), perSession(a, b, 'heap_mib')]),
  ];
  const pooled = r.rounds.flatMap((x) => x.per_session_ms);
  const n = r.setup.sessions;
  const recRows = r.rounds.map((x) => [
    String(x.round),
    num(x.listen_ms),
    num(pct(x.per_session_ms, 50)),
    num(pct(x.per_session_ms, 95)),
    num(x.all_ms),
    `${String(x.agents_rerun)} / ${String(x.agents_not_running)} / ${String(x.failed)}`,
    `${num(x.rss_mib_after, 1)} / ${num(x.heap_mib_after, 1)}`,
  ]);
  const sum = (k: 'agents_rerun' | 'agents_not_running' | 'failed'): number => r.rounds.reduce((a, x) => a + x[k], 0);
  recRows.push([
    `all ${String(r.rounds.length)} (p50 of rounds; pooled sessions)`,
    num(pct(r.rounds.map((x) => x.listen_ms), 50)),
    num(pct(pooled, 50)),
    num(pct(pooled, 95)),
    num(pct(r.rounds.map((x) => x.all_ms), 50)),
    `${String(sum('agents_rerun'))} / ${String(sum('agents_not_running'))} / ${String(sum('failed'))}`,
    '',
  ]);
  const m = r.machine;
  const load = (l: number[]): string => l.map((v) => v.toFixed(2)).join(' / ');
  const actl = r.agentctl_rss_kib.filter(Number.isFinite);
  return [
    FLEET_HEADING,
    '',
    `Run of ${r.at}: ${String(n)} ready sessions (${r.setup.agent}; ${r.setup.profile}) launched at most ${String(r.setup.launch_concurrency)} at a time through ${r.setup.serve}; Kubernetes ${m.kubernetes}, client-node ${m.client_node}; Node ${m.node} on ${m.platform}, ${String(m.cpus)} CPUs (${m.cpu}), ${String(m.memory_gib)} GiB; load average ${load(m.loadavg_at_start)} at start, ${load(m.loadavg_at_end)} at the end; Berth ${r.berth_commit}. The machine is shared with the test cluster and other work: the numbers are noisy.`,
    '',
    '**Footprint (figure 7)**',
    '',
    ...table(['connected ready sessions', 'serve RSS (MiB)', 'JS heap after a full GC (MiB)'], [...footRows, ...costRows]),
    '',
    `serve's CPU while idle with ${String(fp(n)?.sessions ?? n)} sessions: ${num(r.idle_cpu_pct, 2)} % of one core (utime + stime over ${String(r.setup.idle_window_s)} s: ${String(r.idle_cpu.ticks)} ticks of 1/${String(r.idle_cpu.clk_tck)} s, so the resolution is ${num(cpuPercent(1, r.idle_cpu.clk_tck, r.idle_cpu.window_ms), 3)} %; for scale, serve had used ${String(r.idle_cpu.serve_ticks_since_start)} ticks since its start, launches included). agentctl VmRSS in the Pod: p50 ${num(pct(actl, 50))} KiB (min ${num(Math.min(...actl))}, max ${num(Math.max(...actl))}, ${String(actl.length)} Pods).`,
    '',
    `**Recovery (figure 5)**: serve SIGKILLed with all ${String(n)} sessions ready, then started again on the same data dir, ${r.rounds.length === 1 ? 'once' : `${String(r.rounds.length)} times`}. For scale: the first start of serve in this run, with no session to reconnect, took ${num(r.samples.serve_start_0_sessions_ms?.[0] ?? Number.NaN)} ms from spawn to listening.`,
    '',
    ...table(
      ['round', 'spawn → listening (ms)', 'per session p50 (ms)', 'per session p95 (ms)', `all ${String(n)} served \`exec true\` (ms)`, 'agents re-run / not running / failed', 'serve RSS / heap after (MiB)'],
      recRows,
    ),
    '',
    `What the figures mean. *serve RSS* is VmRSS of the \`berth serve\` process (/proc/PID/status), read right after a full GC; *JS heap* is \`process.memoryUsage().heapUsed\` in serve after \`HeapProfiler.collectGarbage\`, both through a loopback-only inspector (\`--inspect=127.0.0.1:0\`; the inspector itself costs serve a little memory, alike at every point). Each point is taken ${String(r.setup.settle_s)} s after the sessions settled; the per-session rows are the difference between two points divided by the sessions added, what one more connected session (its port-forward, agentctl client, Pod watch share, inventory rows) costs serve; the first step also carries one-time costs (code loaded and caches filled by the first launches), so the last step is the closer estimate of the marginal cost. *Idle CPU* is the serve process's utime + stime (/proc/PID/stat) over the window with no API call made, as % of one core: the background work of keeping the sessions connected. *agentctl VmRSS* is read in each Pod from /proc through an exec (agentctl is PID 1 after the start script's \`exec\`; the demo agent is a separate process). *Recovery*: the clock starts when the new serve process is spawned; serve reconnects the inventory's sessions (Pods, port-forwards, agentctl handshakes; up to 8 at a time) before it opens its API, so *spawn → listening* includes Node's start and the whole reconnect; then each session is polled in parallel (get until \`ready\`, then \`exec true\` through serve and agentctl, retried every 100 ms) and its time is when its first exec returned exit 0. *Agents re-run* counts sessions whose agent process id (\`agent-1\` …) changed across the restart, *not running* those whose agent is not \`running\` afterwards: both should be 0 (reconnected, not relaunched).`,
    '',
    `Reproduce: \`eval "$(bash test/cluster/cluster.sh env)" && npm run bench:fleet\` (needs dist/ from \`npm run build\` and the running test cluster; BENCH_SESSIONS, default 20, footprint points at 0, half and all; BENCH_ROUNDS, default 3; BENCH_IDLE_S, default 30). Every sample is in bench/results/k8s-fleet.json.`,
  ].join('\n');
}

/** Writes the fleet section into `root`/BENCHMARKS.md from bench/results/k8s-fleet.json (if that exists). */
export function writeFleetSection(root: string): void {
  writeResultSection(root, 'k8s-fleet', FLEET_HEADING, fleetSection);
}
