/**
 * The "Forwarded RPC" section of BENCHMARKS.md (issue 11, figure 6), from bench/results/k8s-rpc.json
 * (written by bench/k8s-rpc.bench.ts): each request through Berth's supervised forward against the
 * same request made inside the Pod, p50/p99 and their ratios. Pure but for `writeRpcSection`, which
 * puts the section in place with bench/cli/report.ts's `upsertSection`.
 * @module
 */
import { writeResultSection, type BenchMachine } from './machine.js';
import { pct, round } from './stats.js';

export const RPC_HEADING = '## Forwarded RPC — `npm run bench:rpc`';

/** The figures, in table order: sample key suffix and label. */
export const RPC_FIGURES = [
  { key: 'health', label: '`GET /health`' },
  { key: 'file.4KiB', label: 'file read, 4 KiB' },
  { key: 'file.1MiB', label: 'file read, 1 MiB' },
  { key: 'exec', label: '`exec true`' },
] as const;

export interface RpcResult {
  at: string;
  machine: BenchMachine & {
    pod_node: string;
    pod_qos_class?: string;
    pod_cpu_cgroup?: string;
    host_pods_cgroup_cpu_shares?: number | null;
  };
  berth_commit: string;
  setup: { reps: { health: number; files: number; exec: number }; rounds: number; warmup: { health: number; files: number; exec: number }; profile: string };
  /** ms per sample; keys `forwarded.<figure>` and `inpod.<figure>`. */
  samples: Record<string, number[]>;
}

/** One table row: the p50/p99 of both paths and the ratios forwarded / in-Pod. */
export interface RpcRow {
  figure: string;
  n: number;
  forwarded: { p50: number; p99: number };
  inPod: { p50: number; p99: number };
  ratio: { p50: number; p99: number };
  /** forwarded p50 − in-Pod p50 (ms): what the forward adds per request. */
  diffP50: number;
}

export function rpcRows(samples: Record<string, number[]>): RpcRow[] {
  return RPC_FIGURES.map(({ key }) => {
    const f = samples[`forwarded.${key}`] ?? [];
    const p = samples[`inpod.${key}`] ?? [];
    const fw = { p50: pct(f, 50), p99: pct(f, 99) };
    const ip = { p50: pct(p, 50), p99: pct(p, 99) };
    return { figure: key, n: Math.min(f.length, p.length), forwarded: fw, inPod: ip, ratio: { p50: fw.p50 / ip.p50, p99: fw.p99 / ip.p99 }, diffP50: fw.p50 - ip.p50 };
  });
}

const fmt = (v: number): string => (!Number.isFinite(v) ? '–' : v >= 100 ? String(Math.round(v)) : v >= 10 ? round(v, 1).toFixed(1) : round(v, 2).toFixed(2));
const times = (v: number): string => (Number.isFinite(v) ? `${round(v, 1).toFixed(1)}×` : '–');

/** What the Pod's CPU share does to the in-Pod figures (said only when they were slower than the forwarded ones). */
function cpuNote(rows: RpcRow[], qos: string | undefined, cgroup: string | undefined, hostShares: number | null | undefined): string {
  const slower = rows.filter((x) => x.ratio.p50 < 1).map((x) => RPC_FIGURES.find((f) => f.key === x.figure)?.label ?? x.figure);
  const base = `The session's Pod has QoS class ${qos ?? 'unknown'} (no CPU request, as in the launch benchmark; its container's cgroup shows ${cgroup ?? 'unknown'}).`;
  if (slower.length === 0) return base;
  return (
    `${base} In this run ${slower.join(', ')} took longer in the Pod than through the forward: every Pod process runs under the test kubelet's cgroup root (berth-test${hostShares ? `, cpu.shares ${String(hostShares)}` : ''}), ` +
    'which weighs like a single host process (1024) against the host processes beside it, so on this loaded two-core machine agentctl and the in-Pod script both wait for the CPU, and an in-Pod round trip needs the two of them while a forwarded one needs only agentctl ' +
    '(the controller, the API server, the kubelet and containerd are host processes). The ratios here likely understate what the forward costs on an idle node.'
  );
}

export function rpcSection(r: RpcResult): string {
  const rows = rpcRows(r.samples);
  const label = new Map<string, string>(RPC_FIGURES.map((f) => [f.key, f.label]));
  const health = rows.find((x) => x.figure === 'health');
  const m = r.machine;
  const load = (l: number[]): string => l.map((v) => v.toFixed(2)).join(' / ');
  const healthMet = health !== undefined && health.ratio.p50 <= 3;
  return [
    RPC_HEADING,
    '',
    `Run of ${r.at}: one ready Kubernetes session (${r.setup.profile}); ${String(r.setup.reps.health)} timed \`/health\` requests and ${String(r.setup.reps.files)} of each other request per path, ` +
      `in ${String(r.setup.rounds)} interleaved rounds (forwarded, then in the Pod, then the next round), each figure of each round after untimed warm-up requests (${String(r.setup.warmup.health)} \`/health\`, ${String(r.setup.warmup.files)} of each file read, ${String(r.setup.warmup.exec)} \`exec true\`). ` +
      `Kubernetes ${m.kubernetes}, client-node ${m.client_node}, Node ${m.node} here and ${m.pod_node} in the Pod, ${m.platform}, ${String(m.cpus)} CPUs (${m.cpu}), ${String(m.memory_gib)} GiB; ` +
      `load average ${load(m.loadavg_at_start)} at start, ${load(m.loadavg_at_end)} at the end; Berth ${r.berth_commit}. The machine is shared with the test cluster and other work: read the ratios.`,
    '',
    '| request (ms) | n | forwarded p50 | forwarded p99 | in the Pod p50 | in the Pod p99 | ratio p50 | ratio p99 | p50 difference |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (x) =>
        `| ${label.get(x.figure) ?? x.figure} | ${String(x.n)} | ${fmt(x.forwarded.p50)} | ${fmt(x.forwarded.p99)} | ${fmt(x.inPod.p50)} | ${fmt(x.inPod.p99)} | ${times(x.ratio.p50)} | ${times(x.ratio.p99)} | ${fmt(x.diffP50)} |`,
    ),
    '',
    `Target of issue 11, forwarded \`/health\` ≤ 3× in the Pod at p50: ${health ? `${times(health.ratio.p50)}, ${healthMet ? 'met' : '**missed**'}` : 'not measured'}.`,
    '',
    cpuNote(rows, m.pod_qos_class, m.pod_cpu_cgroup, m.host_pods_cgroup_cpu_shares),
    '',
    '*Forwarded* is what the controller does for a user, timed in the process that hosts it (an in-process controller, as `berth serve` runs it): `/health` is `Controller.workspace(id)` ' +
      "(one `GET /health` on the session's live InstanceClient, plus the controller's in-memory session check); the file reads are `readFile` on the FilesClient that call hands out (agentctl returns the " +
      'bytes base64 in JSON; the time includes decoding them); `exec true` is `Controller.exec(id, ["true"])`: start the process, close its stdin, follow its output stream (a WebSocket) until the exit message. ' +
      "All of it goes through Berth's supervised forward: a listener on 127.0.0.1 here that opens one client-node port-forward WebSocket (API server → kubelet → the Pod's loopback) per TCP connection, " +
      "so keep-alive requests reuse one, while each exec's output stream is a new connection and pays a new port-forward set-up. " +
      '*In the Pod* is the same HTTP requests, made by a Node script run in the Pod (through one exec per round, not timed) straight to agentctl on 127.0.0.1 with the same token and instance id, ' +
      "using fetch like the controller's client and a minimal WebSocket reader for the exec's stream (bench/k8s/rpc-pod.ts); its timings are taken in the Pod with `performance.now()`. " +
      'The ratio is forwarded / in the Pod for the same percentile, the difference what the forward adds per request at p50. Both sides read the same files (random bytes, written into the workspace first).',
    '',
    'Reproduce: `eval "$(bash test/cluster/cluster.sh env)" && npm run bench:rpc` (BENCH_R: timed repetitions per path of the file reads and `exec true`, default 50, `/health` gets 4× as many; ' +
      'BENCH_ROUNDS, default 5). Every sample is in bench/results/k8s-rpc.json.',
  ].join('\n');
}

/** Writes the RPC section into `root`/BENCHMARKS.md from bench/results/k8s-rpc.json (if that exists). */
export function writeRpcSection(root: string): void {
  writeResultSection(root, 'k8s-rpc', RPC_HEADING, rpcSection);
}
