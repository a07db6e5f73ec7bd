/**
 * Forwarded-RPC benchmark of the Kubernetes executor on the test cluster (issue 11, figure 6; needs
 * the running test cluster and `eval "$(bash test/cluster/cluster.sh env)"`): one ready session
 * (demo agent, managed PVC, agent image) on an in-process controller as the executor's
 * ServiceAccount; `/health`, a 4 KiB and a 1 MiB file read and `exec true` timed R times through
 * Berth's supervised forward (the Controller's own calls on the live instance), then the same
 * requests made inside the Pod by a Node script (bench/k8s/rpc-pod.ts) straight to agentctl on
 * its loopback. The two paths alternate in rounds so a load spike on the shared machine hits both.
 * Writes bench/results/k8s-rpc.json and its BENCHMARKS.md section. Measures only: nothing here
 * asserts a time.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { VersionApi } from '@kubernetes/client-node';
import type { Controller } from '../src/controller/index.js';
import { SECRET_REF } from '../src/controller/context.js';
import { AGENTCTL_PORT } from '../src/executors/kubernetes/constants.js';
import { InventoryStore } from '../src/inventory/index.js';
import { berthOnCluster, FAST_AGENT_ENV, imageTemplate, launchReady, ROOT } from '../test/k8s/support/berth.js';
import { clusterEnv } from '../test/k8s/support/env.js';
import { loadKubeConfig } from '../test/k8s/support/kube.js';
import { parsePodOutput, POD_SCRIPT, type PodInput, type PodOutput } from './k8s/rpc-pod.js';
import { benchMachine, berthCommit } from './k8s/machine.js';
import { rpcRows, writeRpcSection, type RpcResult } from './k8s/rpc-report.js';

const intEnv = (name: string, dflt: number): number => Math.max(1, Number.parseInt(process.env[name] ?? '', 10) || dflt);
const R = intEnv('BENCH_R', 50);
const REPS = { health: 4 * R, files: R, exec: R };
const ROUNDS = Math.min(intEnv('BENCH_ROUNDS', 5), R);
/** Untimed calls before each figure's timed ones, per round and path (a fresh Node process in the Pod needs its JIT warm). */
const WARMUP = { health: 20, files: 5, exec: 3 };
const FILES = [
  { name: '4KiB', path: '.bench-rpc/4k.bin', bytes: 4 * 1024 },
  { name: '1MiB', path: '.bench-rpc/1m.bin', bytes: 1024 * 1024 },
] as const;

/** `total` split into `parts` near-equal positive counts (the rounds' shares). */
function split(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor((total * (i + 1)) / parts) - Math.floor((total * i) / parts));
}

/** Times `fn` `reps` times after `warmup` untimed calls, pushing each sample (ms) onto `out`. */
async function timeLoop(out: number[], reps: number, warmup: number, fn: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < warmup; i++) await fn();
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
}

/** One round through the controller: the same figures as the in-Pod script, in the same order. */
async function forwardedRound(c: Controller, id: string, reps: PodInput['reps'], samples: Record<string, number[]>): Promise<void> {
  const at = (k: string): number[] => (samples[`forwarded.${k}`] ??= []);
  await timeLoop(at('health'), reps.health, WARMUP.health, () => c.workspace(id));
  const { files } = await c.workspace(id);
  for (const f of FILES) {
    await timeLoop(at(`file.${f.name}`), reps.files, WARMUP.files, async () => {
      const bytes = await files.readFile(f.path);
      if (bytes.length !== f.bytes) throw new Error(`${f.path}: ${bytes.length} bytes, expected ${f.bytes}`);
    });
  }
  await timeLoop(at('exec'), reps.exec, WARMUP.exec, async () => {
    const r = await c.exec(id, ['true']);
    if (r.exitCode !== 0) throw new Error(`exec true: exit ${String(r.exitCode)}`);
  });
}

/** One round inside the Pod: the script through an exec, its input (with the token) on stdin. */
async function inPodRound(c: Controller, id: string, input: PodInput, samples: Record<string, number[]>): Promise<PodOutput> {
  let stdout = '';
  let stderr = '';
  const dec = new TextDecoder();
  const r = await c.exec(id, ['node', '-e', POD_SCRIPT], {
    stdin: JSON.stringify(input),
    onOutput: (ch) => (ch.stream === 'stdout' ? (stdout += dec.decode(ch.data)) : (stderr += dec.decode(ch.data))),
  });
  const out = parsePodOutput(stdout, stderr, r.exitCode);
  for (const [k, v] of Object.entries(out.samples)) (samples[`inpod.${k}`] ??= []).push(...v);
  return out;
}

/** cpu.shares of the test cluster's kubelet --cgroup-root (test/cluster/cluster.sh) on this machine, when it is cgroup v1. */
function hostPodsShares(): number | null {
  try {
    return Number(readFileSync('/sys/fs/cgroup/cpu/berth-test/cpu.shares', 'utf8').trim());
  } catch {
    return null;
  }
}

/** The container's CPU weight as its cgroup shows it inside the Pod (v1 cpu.shares or v2 cpu.weight). */
async function podCpuWeight(c: Controller, id: string): Promise<string> {
  let out = '';
  const dec = new TextDecoder();
  const script = 'for f in /sys/fs/cgroup/cpu/cpu.shares /sys/fs/cgroup/cpu.weight; do [ -r "$f" ] && echo "$f=$(cat "$f")"; done; true';
  await c.exec(id, ['sh', '-c', script], { onOutput: (ch) => void (ch.stream === 'stdout' && (out += dec.decode(ch.data))) });
  return out.trim().split('\n').join(', ') || 'unknown';
}

/** The bearer token and instance id the controller holds for the session (from its own inventory; never printed). */
async function agentctlAccess(dataDir: string, id: string): Promise<{ token: string; instanceId: string }> {
  const store = InventoryStore.open({ dataDir });
  try {
    const row = await store.getRuntime(id);
    const ref = row?.secretRefs[SECRET_REF.authToken];
    if (!row || !ref) throw new Error(`session ${id}: no runtime row or auth token reference`);
    return { token: await store.revealSecret(ref), instanceId: row.instanceId };
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  const env = clusterEnv();
  const loadStart = loadavg();
  const admin = loadKubeConfig(env.kubeconfig);
  const version = await admin.makeApiClient(VersionApi).getCode();
  const profile = 'agent image, managed PVC 1Gi, no repository, demo agent (BERTH_DEMO_STEP_MS=0), as the executor ServiceAccount';
  const h = await berthOnCluster({
    prefix: 'bench-rpc',
    profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
  });
  const samples: Record<string, number[]> = {};
  let podNode = 'unknown';
  let podQos = 'unknown';
  let podCpu = 'unknown';
  try {
    const c = h.controller;
    const v = await launchReady(c, { executor: 'k8s', env: FAST_AGENT_ENV });
    const { files } = await c.workspace(v.id);
    for (const f of FILES) await files.writeFile(f.path, randomBytes(f.bytes));
    const access = await agentctlAccess(h.dataDir, v.id);
    const pod = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items[0];
    podQos = pod?.status?.qosClass ?? 'unknown';
    podCpu = await podCpuWeight(c, v.id);
    const rounds = { health: split(REPS.health, ROUNDS), files: split(REPS.files, ROUNDS), exec: split(REPS.exec, ROUNDS) };
    for (let i = 0; i < ROUNDS; i++) {
      const reps = { health: rounds.health[i]!, files: rounds.files[i]!, exec: rounds.exec[i]! };
      await forwardedRound(c, v.id, reps, samples);
      const out = await inPodRound(c, v.id, { ...access, controlPort: AGENTCTL_PORT, reps, warmup: WARMUP, files: FILES.map((f) => ({ ...f })) }, samples);
      podNode = out.node;
      console.log(`[round ${i + 1}/${ROUNDS}] health p50 so far: forwarded ${rpcRows(samples)[0]?.forwarded.p50.toFixed(2)} ms, in the Pod ${rpcRows(samples)[0]?.inPod.p50.toFixed(2)} ms`);
    }
    await c.remove(v.id);
  } finally {
    await h.close();
  }

  const machine = {
    ...benchMachine(ROOT, version.gitVersion, loadStart),
    pod_node: podNode,
    pod_qos_class: podQos,
    pod_cpu_cgroup: podCpu,
    host_pods_cgroup_cpu_shares: hostPodsShares(),
  };
  const result: RpcResult & { rows: ReturnType<typeof rpcRows> } = {
    at: new Date().toISOString(),
    machine,
    berth_commit: berthCommit(ROOT),
    setup: { reps: REPS, rounds: ROUNDS, warmup: WARMUP, profile },
    rows: rpcRows(samples),
    samples,
  };
  console.table(
    result.rows.map((x) => ({
      figure: x.figure,
      n: x.n,
      'fwd p50': +x.forwarded.p50.toFixed(2),
      'fwd p99': +x.forwarded.p99.toFixed(2),
      'pod p50': +x.inPod.p50.toFixed(2),
      'pod p99': +x.inPod.p99.toFixed(2),
      'ratio p50': +x.ratio.p50.toFixed(1),
      'ratio p99': +x.ratio.p99.toFixed(1),
    })),
  );
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'k8s-rpc.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeRpcSection(ROOT);
  console.log('wrote bench/results/k8s-rpc.json and its BENCHMARKS.md section');
}

await main();
