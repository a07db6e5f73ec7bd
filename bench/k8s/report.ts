/**
 * Renders BENCHMARKS.md at the repository root from the latest result files: the Kubernetes run
 * (bench/results/k8s-launch.json, written by bench/k8s-launch.bench.ts) and, when present, the
 * local executor's run (bench/results/launch.json, bench/launch.bench.ts). Every number in it
 * comes from those files; the prose only says what each figure means and how to reproduce it.
 * @module
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliSection, upsertSection, type CliResult } from '../cli/report.js';
import { pct, round } from './stats.js';

interface K8sResult {
  at: string;
  machine: Record<string, unknown>;
  setup: Record<string, unknown>;
  samples: Record<string, number[]>;
  extra: Record<string, unknown>;
}

interface Summary {
  n: number;
  p50: number;
  p90?: number;
  p95?: number;
  max: number;
}

/** The parts of bench/results/launch.json this page shows. */
interface LocalResult {
  at?: string;
  node?: string;
  platform?: string;
  cpus?: number;
  setup?: { n_sequential?: number };
  sequential?: { launch_to_ready_ms?: Summary; stages_ms?: Record<string, Summary>; first_output_byte_after_ready_ms?: Summary };
  concurrent?: { sessions?: number; wall_to_all_ready_ms?: number; per_launch_ms?: Summary };
  restart?: { sessions?: number; recover_ms?: number; exec_all_from_restart_ms?: number };
  stop_resume?: { stop_ms?: Summary; resume_to_ready_ms?: Summary };
  rm_ms?: { all?: Summary };
  rss_kib?: { controller_process_baseline?: number; controller_process_idle_10_ready?: number; agentctl_per_session?: Summary };
}

const STAGES = ['storage', 'pod_ready', 'bootstrap', 'agentctl_connect', 'agent_start'] as const;

function ms(v: number | undefined): string {
  return v === undefined || Number.isNaN(v) ? '–' : `${Math.round(v)}`;
}

function mib(bytes: unknown): string {
  return `${round(Number(bytes) / (1 << 20), 1)} MiB`;
}

function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function k8sSection(r: K8sResult): string {
  const s = r.samples;
  const p = (k: string, q: number): number => pct(s[k] ?? [], q);
  const row = (label: string, k: string): (string | number)[] => [label, s[k]?.length ?? 0, ms(p(k, 50)), ms(p(k, 95)), ms(Math.min(...(s[k] ?? [NaN]))), ms(Math.max(...(s[k] ?? [NaN])))];
  const cmp = (label: string, total: string, floor: string): (string | number)[] => [
    label,
    `${round(p(total, 50) / p(floor, 50), 2)}×`,
    `${ms(p(total, 50) - p(floor, 50))} ms`,
    `${round(p(total, 95) / p(floor, 95), 2)}×`,
    `${ms(p(total, 95) - p(floor, 95))} ms`,
  ];
  const m = r.machine;
  const failures = (r.extra.concurrent_failures as string[] | undefined) ?? [];
  const floorFailures = (r.extra.floor_failures as string[] | undefined) ?? [];
  const rss0 = p('rss.controller_0_sessions_mib', 50);
  const rss10 = p('rss.controller_10_sessions_mib', 50);
  const sessions = Number(r.extra.controller_connected_sessions ?? 10);
  const verdict = (ok: boolean): string => (ok ? 'met' : '**missed**');
  const launch50 = p('launch.total', 50);
  const stageOrder = STAGES.map((st) => [st, p(`launch.${st}`, 50)] as const).sort((a, b) => b[1] - a[1]);
  return [
    '## Kubernetes executor — `npm run bench:k8s`',
    '',
    `Run of ${r.at}: N = ${String(r.setup.n)} sequential launches, ${String(r.setup.concurrent)} concurrent; Kubernetes ${String(m.kubernetes)}, ` +
      `client-node ${String(m.client_node)}, Node ${String(m.node)} on ${String(m.platform)}, ${String(m.cpus)} CPUs (${String(m.cpu)}), ${String(m.memory_gib)} GiB, ` +
      `load average at start ${(m.loadavg_at_start as number[]).map((v) => round(v, 2)).join(' / ')}; Berth ${String(m.berth_commit)}. ` +
      'The test cluster shares its two cores with the controller, the benchmark and the other work on the machine: read the ratios, not the absolute values.',
    '',
    '### Launch next to the kubelet floors (ms)',
    '',
    table(['figure', 'n', 'p50', 'p95', 'min', 'max'], [
      row('Berth launch → ready (agent image, managed PVC, clone)', 'launch.total'),
      row('API-visible floor, with PVC', 'floor.api.pvc'),
      row('real floor, with PVC', 'floor.real.pvc'),
      row('API-visible floor, no PVC', 'floor.api.nopvc'),
      row('real floor, no PVC', 'floor.real.nopvc'),
      row('Berth launch → ready, no PVC, no repository (bundle)', 'delivery.bundle.total'),
    ]),
    '',
    table(['Berth against the floor', 'p50 ratio', 'p50 difference', 'p95 ratio', 'p95 difference'], [
      cmp('launch (PVC) / API-visible floor (PVC)', 'launch.total', 'floor.api.pvc'),
      cmp('launch (PVC) / real floor (PVC)', 'launch.total', 'floor.real.pvc'),
      cmp('launch (no PVC, no repo) / API-visible floor (no PVC)', 'delivery.bundle.total', 'floor.api.nopvc'),
      cmp('launch (no PVC, no repo) / real floor (no PVC)', 'delivery.bundle.total', 'floor.real.nopvc'),
    ]),
    '',
    `Kubelet's own record for the launched Pods (creationTimestamp → startedAt, whole seconds): p50 ${ms(p('launch.kubelet_create_to_started_s', 50))} s, p95 ${ms(p('launch.kubelet_create_to_started_s', 95))} s.`,
    ...(floorFailures.length > 0
      ? ['', `Floor samples given up (not counted above): ${floorFailures.length} (${floorFailures.map((f) => f.replace(/\|/g, '/')).join('; ')}).`]
      : []),
    '',
    '### Stages (ms, p50 / p95)',
    '',
    table(
      ['stage', 'sequential launch', 'resume', `${String(r.setup.concurrent)} concurrent`],
      STAGES.map((st) => [st, ...['launch', 'resume', 'concurrent'].map((k) => `${ms(p(`${k}.${st}`, 50))} / ${ms(p(`${k}.${st}`, 95))}`)]),
    ),
    '',
    `Where the sequential launch's p50 goes, largest stage first: ${stageOrder.map(([st, v]) => `${st} ${ms(v)}`).join(', ')} (sum of stage p50s ${ms(stageOrder.reduce((a, [, v]) => a + v, 0))} of a ${ms(launch50)} ms total).`,
    '',
    `Against the real floor (PVC, p50 ${ms(p('floor.real.pvc', 50))} ms): \`storage\` + \`pod_ready\` take ${ms(p('launch.storage', 50) + p('launch.pod_ready', 50))} ms, ` +
      `${ms(p('launch.storage', 50) + p('launch.pod_ready', 50) - p('floor.real.pvc', 50))} ms more than the floor (the PVC and Pod creates with their checkpoints, the exec attempts while the container starts); ` +
      `after it, \`bootstrap\` + \`agentctl_connect\` + \`agent_start\` add ${ms(p('launch.bootstrap', 50) + p('launch.agentctl_connect', 50) + p('launch.agent_start', 50))} ms of Berth's own round trips (upload and clone, port-forward and handshake, agent start).`,
    '',
    '### agentctl delivery (the `bootstrap` stage, no repository, emptyDir; ms)',
    '',
    table(['build', 'main file', 'bootstrap p50', 'bootstrap p95', 'launch p50', 'launch p95'], [
      ['bundle (`agentctl.cjs`, agent image with Node)', mib(m.agentctl_bundle_bytes), ms(p('delivery.bundle.bootstrap', 50)), ms(p('delivery.bundle.bootstrap', 95)), ms(p('delivery.bundle.total', 50)), ms(p('delivery.bundle.total', 95))],
      ['SEA (`agentctl-sea` + its libraries, busybox)', mib(m.agentctl_sea_bytes), ms(p('delivery.sea.bootstrap', 50)), ms(p('delivery.sea.bootstrap', 95)), ms(p('delivery.sea.total', 50)), ms(p('delivery.sea.total', 95))],
    ]),
    '',
    '### Resume, concurrency, footprint',
    '',
    table(['figure', 'n', 'p50', 'p95', 'min', 'max'], [
      row('stop (ms)', 'stop'),
      row('resume: resume call → ready on the same PVC (ms)', 'resume.total'),
      row('rm (ms)', 'rm'),
      row(`${String(r.setup.concurrent)} concurrent: launch call → each ready (ms)`, 'concurrent.total'),
      row(`${String(r.setup.concurrent)} concurrent: wall until all ready (ms)`, 'concurrent.wall_all_ready'),
      row(`floor of a burst: ${String(r.setup.concurrent)} sleeping Pods with a PVC created together, create → first exec, each (ms)`, 'floor.real.burst'),
      row(`floor of a burst: the same Pods, create → the watch shows them running (ms)`, 'floor.api.burst'),
    ]),
    '',
    `- Concurrent failures: ${failures.length}${failures.length ? ` (${failures.map((f) => f.replace(/\|/g, '/')).join('; ')})` : ''}. ` +
      `Concurrent p95 / concurrent p50: ${round(p('concurrent.total', 95) / p('concurrent.total', 50), 2)}×; ` +
      `concurrent p95 / sequential p50: ${round(p('concurrent.total', 95) / launch50, 2)}×.`,
    ...(s['floor.real.burst']?.length
      ? [
          `- The cluster's own burst: ${String(r.setup.concurrent)} bare Pods with a PVC created together take an exec after p50 ${ms(p('floor.real.burst', 50))} / p95 ${ms(p('floor.real.burst', 95))} ms, ` +
            `so the bare Pods' own p50 is ${round(p('floor.real.burst', 50) / p('floor.real.pvc', 50), 2)}× (p95 ${round(p('floor.real.burst', 95) / p('floor.real.pvc', 50), 2)}×) the single real floor's p50: that much of the burst ratio is the cluster's on this machine, before any launch code runs. ` +
            `Berth's concurrent p95 is ${round(p('concurrent.total', 95) / p('floor.real.burst', 95), 2)}× the burst floor's p95 (${ms(Math.abs(p('concurrent.total', 95) - p('floor.real.burst', 95)))} ms ${p('concurrent.total', 95) >= p('floor.real.burst', 95) ? 'more' : 'less'}; ` +
            "the bare Pods are created right after their claims, as for the single floor, so some may wait out the kubelet's mount back-off, seen as FailedMount events when claims and Pods are created together, which Berth's claim-binding wait avoids).",
        ]
      : []),
    `- Controller RSS (the benchmark process, which hosts the controller in-process): ${round(rss0)} MiB with 0 sessions, ${round(rss10)} MiB with ${sessions} connected; ` +
      `${round(((rss10 - rss0) * 1024) / Math.max(1, sessions))} KiB per session; JS heap in use ${round(p('heap.controller_0_sessions_mib', 50))} → ${round(p('heap.controller_10_sessions_mib', 50))} MiB ` +
      `(${round(((p('heap.controller_10_sessions_mib', 50) - p('heap.controller_0_sessions_mib', 50)) * 1024) / Math.max(1, sessions))} KiB per session). Both after a full GC.`,
    `- agentctl VmRSS in the Pod (read from /proc/<pid>/status through an exec): bundle (Node) ${ms(p('rss.agentctl_bundle_kib', 50))} KiB, SEA ${ms(p('rss.agentctl_sea_kib', 50))} KiB.`,
    '',
    '### Against the targets of issue 11 (p50)',
    '',
    table(['target', 'measured', ''], [
      ['total ≤ API-visible floor', `${ms(launch50)} vs ${ms(p('floor.api.pvc', 50))} ms`, verdict(launch50 <= p('floor.api.pvc', 50))],
      ['total − real floor ≤ 300 ms', `${ms(launch50 - p('floor.real.pvc', 50))} ms`, verdict(launch50 - p('floor.real.pvc', 50) <= 300)],
      ['resume ≤ launch', `${ms(p('resume.total', 50))} vs ${ms(launch50)} ms`, verdict(p('resume.total', 50) <= launch50)],
      [
        '10 concurrent p95 ≤ 2× single p50',
        `${round(p('concurrent.total', 95) / launch50, 2)}×${s['floor.real.burst']?.length ? ` (bare Pods, burst real floor / single real floor: p50 ${round(p('floor.real.burst', 50) / p('floor.real.pvc', 50), 2)}×, p95 ${round(p('floor.real.burst', 95) / p('floor.real.pvc', 50), 2)}×)` : ''}`,
        verdict(p('concurrent.total', 95) <= 2 * launch50),
      ],
    ]),
  ].join('\n');
}

function localSection(l: LocalResult): string {
  const sum = (x: Summary | undefined): string => (x ? `${x.n} | ${ms(x.p50)} | ${ms(x.p90)} | ${ms(x.max)}` : '– | – | – | –');
  const seq = l.sequential ?? {};
  const con = l.concurrent ?? {};
  const sr = l.stop_resume ?? {};
  const rss = l.rss_kib ?? {};
  const lines = [
    ['launch → ready', sum(seq.launch_to_ready_ms)],
    ...Object.entries(seq.stages_ms ?? {}).map(([k, v]) => [`  stage ${k}`, sum(v)]),
    ['first agent output after ready', sum(seq.first_output_byte_after_ready_ms)],
    [`${String(con.sessions)} concurrent: per launch`, sum(con.per_launch_ms)],
    ['stop', sum(sr.stop_ms)],
    ['resume → ready', sum(sr.resume_to_ready_ms)],
    ['rm', sum(l.rm_ms?.all)],
    ['agentctl RSS per session (KiB)', sum(rss.agentctl_per_session)],
  ];
  return [
    '## Local executor — `npm run bench:launch`',
    '',
    `Run of ${String(l.at)} (Node ${String(l.node)}, ${String(l.platform)}, ${String(l.cpus)} CPUs, ${String(l.setup?.n_sequential)} sequential launches), from bench/results/launch.json. ms unless noted.`,
    '',
    '| figure | n | p50 | p90 | max |',
    '| --- | --- | --- | --- | --- |',
    ...lines.map(([k, v]) => `| ${String(k)} | ${String(v)} |`),
    '',
    `Concurrent wall until all ready: ${ms(con.wall_to_all_ready_ms)} ms. Controller restart with ${String(l.restart?.sessions)} sessions: recover ${ms(l.restart?.recover_ms)} ms, exec on all from the restart ${ms(l.restart?.exec_all_from_restart_ms)} ms. ` +
      `Controller RSS ${ms((rss.controller_process_baseline ?? NaN) / 1024)} MiB at start, ${ms((rss.controller_process_idle_10_ready ?? NaN) / 1024)} MiB with 10 ready sessions.`,
  ].join('\n');
}

const MEANING = `## What each figure means

- **Berth launch → ready**: the \`launch\` call until the controller emits the session's \`ready\` state (workspace up, agentctl connected, agent started), the event \`berth launch\` waits for (the JSON also has \`launch.call_to_view\`: until the call that waited returned its view, one agent-status round trip later; runs before 2026-12-02 16:00 measured that); the demo agent without pauses, a 1-commit repository cloned over git://, a fresh managed PVC, as the executor's ServiceAccount in a restricted namespace.
- **Stages**: Berth's own stage records (\`storage\` = PVC create/bind check, \`pod_ready\` = Pod create until it accepts an exec, \`bootstrap\` = the one exec that uploads agentctl and the scripts and waits for the clone, \`agentctl_connect\` = port-forward + handshake, \`agent_start\` = the agent process started).
- **API-visible floor**: for a Pod of the same image that only sleeps, created with client-node as the admin kubeconfig, the create call until the watch event that shows the main container running. The kubelet reports the status through its PLEG relist, so this lags the container itself by up to about a second.
- **Real floor**: the same Pod, the create call until the first exec (\`true\`) into the container that succeeds; attempts one at a time, 25 ms apart after a refusal; the time is taken when the successful exec returns. Its resolution is one attempt cycle (a refused exec plus 25 ms; the JSON has the attempt counts, \`floor.exec_attempts.*\`), so it can overshoot the moment the container accepts an exec by that much. With a PVC the clock starts at the PVC create call and the Pod is created right after it.
- **Ratios and differences**: Berth's p50 (p95) divided by, and minus, the floor's p50 (p95) for the same kind of Pod; the difference is Berth's own share of the launch.
- **agentctl delivery**: the \`bootstrap\` stage of a launch without a repository on an emptyDir, on the agent image (Node present: the single-file bundle) and on busybox (no Node: the SEA binary and the C libraries it links against).
- **Resume**: \`stop\` (deletes the Pod, keeps the PVC) then \`resume\` until ready again on the same PVC (no clone).
- **Concurrent**: ${'10'} launches started together; each one's time from the common start; the ratio of its p95 to the sequential p50 is what a burst costs. The **floor of a burst** is the real floor of 10 sleeping Pods with a PVC each, created together (each from its own create call): what the API server, scheduler, kubelet and containerd take for a burst on this machine before any launch code runs.
- **Controller RSS**: \`process.memoryUsage()\` (rss, and heapUsed) of the benchmark process, which hosts the controller (and the test harness) in-process, 2 s after the sessions settled and after a full GC; the difference per session is the meaningful figure.
- **agentctl RSS**: VmRSS of agentctl's process in the Pod (PID 1 after the start script's \`exec\`), read from /proc through an exec.
`;

const REPRODUCE = `## How to reproduce

\`\`\`sh
npm run bench                                # every figure below in one invocation (brings the test cluster
                                             # up and down itself unless it runs; BENCH_SKIP_K8S=1: local only)
# or one figure at a time:
npm run build                                # agentctl bundle; the harness builds the SEA when stale
eval "$(bash test/cluster/cluster.sh env)"   # the running test cluster (npm run cluster:up)
BENCH_N=10 npm run bench:k8s                 # writes bench/results/k8s-launch.json and this file
BENCH_N=5 npm run bench:launch               # local executor: bench/results/launch.json
BENCH_N=8 npm run bench:trace                # where a launch's time goes: every stage event and agentctl's own
                                             # log lines in the Pod (listening, handshake, instance, agent) on one clock
\`\`\`

Every sample of the last run is in bench/results/k8s-launch.json (with the machine, versions and setup). No test asserts a time; the numbers here come only from runs.
`;

/** Writes BENCHMARKS.md from the result files under `root`/bench/results. */
export function writeBenchmarksMd(root: string): void {
  const k8sFile = join(root, 'bench', 'results', 'k8s-launch.json');
  const localFile = join(root, 'bench', 'results', 'launch.json');
  const parts = ['# Benchmarks', '', 'Berth on the test cluster next to the Kubernetes floors for the same Pods, and the local executor. Generated by `npm run bench:k8s` from the latest result files (see issue 11).', ''];
  if (existsSync(k8sFile)) parts.push(k8sSection(JSON.parse(readFileSync(k8sFile, 'utf8')) as K8sResult), '');
  if (existsSync(localFile)) parts.push(localSection(JSON.parse(readFileSync(localFile, 'utf8')) as LocalResult), '');
  // the CLI's figure has its own writer (bench/cli/report.ts, run by npm run bench:cli); kept here when present
  const cliFile = join(root, 'bench', 'results', 'cli.json');
  if (existsSync(cliFile)) parts.push(cliSection(JSON.parse(readFileSync(cliFile, 'utf8')) as CliResult), '');
  parts.push(MEANING, REPRODUCE);
  const mdFile = join(root, 'BENCHMARKS.md');
  const previous = existsSync(mdFile) ? readFileSync(mdFile, 'utf8') : '';
  writeFileSync(mdFile, carrySections(previous, parts.join('\n')));
}

/**
 * `next` with every `## ` section of `previous` that `next` does not have (the sections other
 * benchmarks write with their own writers: by-hand, fleet, RPC …), in their earlier order, before
 * "What each figure means".
 */
export function carrySections(previous: string, next: string): string {
  let md = next;
  const headings = [...previous.matchAll(/^## .*$/gm)].map((m) => ({ heading: m[0], at: m.index }));
  headings.forEach((h, i) => {
    if (md.includes(`${h.heading}\n`)) return;
    const end = i + 1 < headings.length ? (headings[i + 1]?.at ?? previous.length) : previous.length;
    md = upsertSection(md, h.heading, previous.slice(h.at, end));
  });
  return md;
}
