/**
 * The by-hand baseline's section of BENCHMARKS.md (figure 2 of issue 11), from
 * bench/results/k8s-byhand.json and, when present, the Berth launch of bench/results/k8s-launch.json
 * (its summary row `launch.total`) for the ratio. `byhandSection` is pure; `writeByhandSection`
 * reads the files and puts the section in place with `upsertSection`.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeResultSection, type BenchMachine } from './machine.js';
import type { Row } from './stats.js';

export const BYHAND_HEADING = '## By-hand baseline — `npm run bench:byhand`';
/** The section that follows the Kubernetes executor's in BENCHMARKS.md (bench/k8s/report.ts). */
const LOCAL_HEADING = '## Local executor — `npm run bench:launch`';

export interface ByhandResult {
  at: string;
  machine: BenchMachine & {
    kubectl: string;
    kubectl_command: string;
    berth_commit: string;
    agentctl_bundle_bytes: number;
  };
  setup: { n: number; warmup: number; image: string; copy: string };
  rows: Row[];
  samples: Record<string, number[]>;
}

/** The parts of bench/results/k8s-launch.json the ratio needs. */
export interface LaunchResult {
  at: string;
  machine?: { loadavg_at_start?: number[]; berth_commit?: string };
  rows?: Row[];
}

const LABELS: Record<string, string> = {
  'step.apply': '1. `kubectl apply -f -` (PVC + Pod)',
  'step.wait_ready': '2. `kubectl wait --for=condition=Ready`',
  'step.copy': '3. `kubectl cp` agentctl.cjs',
  'step.start': '4. `kubectl exec`: start agentctl, until it listens',
  'step.port_forward': '5. `kubectl port-forward` → local port printed',
  'step.first_health': '6. first `GET /health` answered 200',
  total: '**total: apply → first /health**',
  'kubectl.version_client': '`kubectl version --client` (one kubectl start, for scale)',
  delete: '`kubectl delete pod pvc --wait` (after, not in the total)',
};

const fmt = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? '–' : String(Math.round(v)));
const load = (l: number[] | undefined): string => (l ?? []).map((v) => v.toFixed(2)).join(' / ');
const ratio = (a: number, b: number): string => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : '–');

export function byhandSection(r: ByhandResult, launch?: LaunchResult): string {
  const row = (k: string): Row | undefined => r.rows.find((x) => x.figure === k);
  const lines = Object.keys(LABELS)
    .map((k) => [k, row(k)] as const)
    .filter((e): e is readonly [string, Row] => e[1] !== undefined)
    .map(([k, x]) => `| ${LABELS[k] ?? k} | ${String(x.n)} | ${fmt(x.p50)} | ${fmt(x.p95)} | ${fmt(x.min)} | ${fmt(x.max)} |`);
  const total = row('total');
  const attempts = row('health_attempts');
  const stepSum = ['apply', 'wait_ready', 'copy', 'start', 'port_forward', 'first_health'].reduce((a, s) => a + (row(`step.${s}`)?.p50 ?? Number.NaN), 0);
  const m = r.machine;
  const berth = launch?.rows?.find((x) => x.figure === 'launch.total');
  const ratioPart =
    berth && total
      ? [
          '',
          `**Berth against the baseline.** Berth's launch → ready (bench/results/k8s-launch.json, run of ${launch?.at ?? '?'}, n = ${String(berth.n)}, Berth ${launch?.machine?.berth_commit ?? '?'}, load average ${load(launch?.machine?.loadavg_at_start)} at its start): p50 ${fmt(berth.p50)} ms, p95 ${fmt(berth.p95)} ms. ` +
            `Berth p50 / baseline p50 = **${ratio(berth.p50, total.p50)}** (p95 / p95 ${ratio(berth.p95, total.p95)}; issue 11's target is ≤ 0.5×). ` +
            'The two runs were made at different times, on a shared machine whose load differs between them, so the ratio is indicative only; and Berth\'s launch does more than the baseline: it also clones a repository into the workspace, hands over a nonce for a token, and starts the agent.',
        ]
      : ['', 'No bench/results/k8s-launch.json: run `npm run bench:k8s` for the Berth side of the ratio.'];
  return [
    BYHAND_HEADING,
    '',
    `Run of ${r.at}: N = ${String(r.setup.n)} runs (after ${String(r.setup.warmup)} warm-up run${r.setup.warmup === 1 ? '' : 's'}, not counted), each in turn, on the agent image (\`${r.setup.image}\`, imagePullPolicy Never) in a fresh Pod Security "restricted" namespace, as the admin kubeconfig; kubectl ${m.kubectl} (\`${m.kubectl_command}\`), Kubernetes ${m.kubernetes}; Node ${m.node} on ${m.platform}, ${String(m.cpus)} CPUs (${m.cpu}), ${String(m.memory_gib)} GiB, load average ${load(m.loadavg_at_start)} at start, ${load(m.loadavg_at_end)} at the end; Berth ${m.berth_commit}. The machine is shared with the test cluster and other work: the numbers are noisy.`,
    '',
    '| step (ms) | n | p50 | p95 | min | max |',
    '| --- | --- | --- | --- | --- | --- |',
    ...lines,
    '',
    `Sum of the step p50s: ${fmt(stepSum)} ms. /health attempts until the first 200: p50 ${fmt(attempts?.p50)}, max ${fmt(attempts?.max)} (25 ms apart; agentctl already listens when the forward starts, so more than one would mean the forward was not yet through).`,
    ...ratioPart,
    '',
    `What the figure is: a script doing by hand what Berth's launch automates, without any of Berth's code — each step one command of the real kubectl at the cluster's version (the \`k8s.io/kubectl\` command package, built into the test-cluster binary as \`kube kubectl\`, so the machine's own kubectl, if any, plays no part), timed from the spawn to its exit in this process with \`performance.now()\`. 1: a 1Gi PVC on the default StorageClass (as Berth's managed PVC) and a Pod mounting it at /workspace (the agent image running \`sleep infinity\`, restricted security context), in one \`kubectl apply -f -\`; 2: \`kubectl wait --for=condition=Ready pod/NAME\` (the Ready condition follows the kubelet's status report, so it carries the same PLEG lag as the API-visible floor); 3: ${r.setup.copy} (${(m.agentctl_bundle_bytes / (1 << 20)).toFixed(1)} MiB; the agent image has tar); 4: \`kubectl exec\` of \`sh -c 'AGENTCTL_PORT=8765 nohup node /tmp/agentctl.cjs >/tmp/agentctl.log 2>&1 & …'\`, which returns once agentctl has logged "agentctl listening" (a 20 ms poll of its log; the simplest start that serves /health: no bootstrap nonce, so no handshake and no token; the wait is needed because \`kubectl port-forward\` exits at the first connection the Pod refuses); 5: \`kubectl port-forward pod/NAME :8765\` until it prints the local port it listens on; 6: \`GET /health\` through that port until one answers 200. The total runs from the spawn of step 1 to that answer; each run then deletes its Pod and PVC with \`kubectl delete --wait\` (timed, not counted). The warm-up run fills kubectl's discovery cache (a temporary KUBECACHEDIR) and the page cache, as a user's earlier kubectl use would. Every sample is in bench/results/k8s-byhand.json.`,
    '',
    'Reproduce: `eval "$(bash test/cluster/cluster.sh env)" && npm run bench:byhand` (BENCH_N, default 10; BENCH_WARMUP, default 1). kubectl is `$BERTH_TEST_KUBECTL` (a command line, e.g. `/path/to/kube kubectl`; `cluster.sh env` exports it once the cluster binary has the `kubectl` sub-command), else `/tmp/kube-kubectl kubectl` (a build of test/cluster/kube with the cluster.sh flags).',
  ].join('\n');
}

/** Writes the by-hand section into `root`/BENCHMARKS.md from bench/results/k8s-byhand.json (if that exists). */
export function writeByhandSection(root: string): void {
  const launchFile = join(root, 'bench', 'results', 'k8s-launch.json');
  const launch = existsSync(launchFile) ? (JSON.parse(readFileSync(launchFile, 'utf8')) as LaunchResult) : undefined;
  // figure 2 right after figure 1 (the Kubernetes section), else before "What each figure means"
  writeResultSection(root, 'k8s-byhand', BYHAND_HEADING, (result: ByhandResult) => byhandSection(result, launch), LOCAL_HEADING);
}
