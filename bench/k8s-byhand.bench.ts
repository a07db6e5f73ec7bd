/**
 * Figure 2 of issue 11, the by-hand baseline (needs the running test cluster and
 * `eval "$(bash test/cluster/cluster.sh env)"`): BENCH_N runs (default 10, after BENCH_WARMUP
 * uncounted runs, default 1) of what a user does without Berth — apply a PVC and a Pod, wait until
 * Ready, `kubectl cp` agentctl in, start it with `kubectl exec`, `kubectl port-forward`, first
 * successful GET /health — with the real kubectl of the cluster's version (bench/k8s/byhand.ts).
 *
 * kubectl: `BERTH_TEST_KUBECTL` (a command line: executable and leading arguments, e.g.
 * `/root/.cache/berth/cluster/bin/kube-v1.34.4-HASH kubectl`), else `/tmp/kube-kubectl kubectl`
 * (test/cluster/kube built to that path with build_kube's flags from test/cluster/cluster.sh).
 * Writes bench/results/k8s-byhand.json (machine, versions, every sample) and the by-hand section of
 * BENCHMARKS.md. Measures only: nothing here asserts a time.
 * @module
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterEnv } from '../test/k8s/support/env.js';
import { loadKubeConfig } from '../test/k8s/support/kube.js';
import { createTestNamespace } from '../test/k8s/support/namespace.js';
import { byHandRun, kubectl, STEPS, type ByHandSample, type Kubectl } from './k8s/byhand.js';
import { writeByhandSection, type ByhandResult } from './k8s/byhand-report.js';
import { benchMachine, berthCommit } from './k8s/machine.js';
import { round, summarizeAll } from './k8s/stats.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const N = positiveInt(process.env.BENCH_N, 10);
const WARMUP = Math.max(0, Number.parseInt(process.env.BENCH_WARMUP ?? '1', 10) || 0);
/** Where the temporary build of test/cluster/kube (with the kubectl sub-command) goes by default. */
const DEFAULT_KUBECTL = '/tmp/kube-kubectl kubectl';

function positiveInt(raw: string | undefined, fallback: number): number {
  const n = Number.parseInt(raw ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** The kubectl command line from BERTH_TEST_KUBECTL or the default; fails clearly when its executable is missing. */
function kubectlCommand(kubeconfig: string, cacheDir: string): { k: Kubectl; command: string } {
  const command = process.env.BERTH_TEST_KUBECTL?.trim() || DEFAULT_KUBECTL;
  const [file, ...prefix] = command.split(/\s+/);
  if (file === undefined || !existsSync(file)) {
    throw new Error(
      `kubectl executable ${String(file)} (from ${process.env.BERTH_TEST_KUBECTL ? 'BERTH_TEST_KUBECTL' : 'the default'} "${command}") does not exist: ` +
        'build test/cluster/kube (it has a `kubectl` sub-command) and set BERTH_TEST_KUBECTL="/path/to/kube kubectl"',
    );
  }
  return { k: { file, prefix, env: { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: cacheDir } }, command };
}

async function main(): Promise<void> {
  const env = clusterEnv();
  const bundle = join(ROOT, 'dist', 'agentctl.cjs');
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run build first`);
  const cacheDir = mkdtempSync(join(tmpdir(), 'berth-byhand-kubecache-'));
  const { k, command } = kubectlCommand(env.kubeconfig, cacheDir);
  const loadStart = loadavg();
  const versions = JSON.parse((await kubectl(k, ['version', '-o', 'json'])).stdout) as { clientVersion?: { gitVersion?: string }; serverVersion?: { gitVersion?: string } };
  console.log(`by-hand baseline: ${String(N)} runs (+${String(WARMUP)} warm-up) with ${command} (kubectl ${String(versions.clientVersion?.gitVersion)}); load average ${loadStart.map((l) => l.toFixed(2)).join(' ')}`);
  const admin = loadKubeConfig(env.kubeconfig);
  const ns = await createTestNamespace(admin, 'bench-byhand', { podSecurity: 'restricted' });
  const samples: Record<string, number[]> = {};
  const add = (key: string, v: number): void => void (samples[key] ??= []).push(round(v, 1));
  const warmup: ByHandSample[] = [];
  try {
    for (let i = 0; i < WARMUP; i++) warmup.push(await byHandRun(k, ns.name, `byhand-warmup-${String(i)}`, env.agentImage, bundle));
    for (let i = 0; i < N; i++) {
      add('kubectl.version_client', (await kubectl(k, ['version', '--client', '-o', 'json'])).ms);
      const s = await byHandRun(k, ns.name, `byhand-${String(i)}`, env.agentImage, bundle);
      for (const step of STEPS) add(`step.${step}`, s.steps[step]);
      add('total', s.total);
      add('health_attempts', s.healthAttempts);
      add('delete', s.deleteMs);
      console.log(`[${String(i + 1)}/${String(N)}] total ${s.total.toFixed(0)} ms: ${STEPS.map((st) => `${st} ${s.steps[st].toFixed(0)}`).join(', ')} (${String(s.healthAttempts)} /health attempts)`);
    }
  } finally {
    await ns.cleanup().catch((err: unknown) => console.warn(`cleanup of namespace ${ns.name}: ${(err as Error).message}`));
    rmSync(cacheDir, { recursive: true, force: true });
  }

  // rows in a fixed order: the steps, the total, then the extras
  const ordered = Object.fromEntries(
    [...STEPS.map((s) => `step.${s}`), 'total', 'health_attempts', 'kubectl.version_client', 'delete'].filter((key) => samples[key]).map((key) => [key, samples[key]!]),
  );
  const rows = summarizeAll(ordered);
  const result: ByhandResult & { warmup_samples: ByHandSample[] } = {
    at: new Date().toISOString(),
    machine: {
      ...benchMachine(ROOT, versions.serverVersion?.gitVersion ?? 'unknown', loadStart),
      kubectl: versions.clientVersion?.gitVersion ?? 'unknown',
      kubectl_command: command,
      berth_commit: berthCommit(ROOT),
      agentctl_bundle_bytes: statSync(bundle).size,
    },
    setup: { n: N, warmup: WARMUP, image: env.agentImage, copy: '`kubectl cp dist/agentctl.cjs NAME:/tmp/agentctl.cjs`' },
    rows,
    samples: ordered,
    warmup_samples: warmup,
  };
  console.table(rows);
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'k8s-byhand.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeByhandSection(ROOT);
  console.log('wrote bench/results/k8s-byhand.json and the by-hand section of BENCHMARKS.md');
}

await main();
