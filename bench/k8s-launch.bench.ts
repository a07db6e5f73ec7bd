/**
 * Launch benchmark of the Kubernetes executor on the test cluster (needs the running test cluster
 * and `eval "$(bash test/cluster/cluster.sh env)"`), issue 11 figures 1, 3, 4 and 7:
 * - N sequential launches (BENCH_N, default 10) of the demo agent with a managed PVC and a git://
 *   clone, as the executor's ServiceAccount: every stage and the total (launch call → ready);
 *   each followed by stop → resume (the resume total and its stages) and rm;
 * - interleaved with them, the two kubelet floors for the same kind of Pods (agent image, with and
 *   without a PVC), measured with client-node as the admin kubeconfig (bench/k8s/floor.ts);
 * - agentctl delivery: N launches without a repository on the agent image (the bundle) and on
 *   busybox (the SEA binary), the `bootstrap` stage of each;
 * - 10 concurrent launches against the sequential ones and against the floor of a burst (10 floor
 *   Pods with a PVC created together); the controller's RSS (this process, which
 *   hosts it) with 0 and 10 connected sessions; agentctl's VmRSS in the Pod, read through an exec.
 * Writes bench/results/k8s-launch.json (machine info, every sample) and BENCHMARKS.md. Measures
 * only: nothing here asserts a time.
 * @module
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { VersionApi } from '@kubernetes/client-node';
import type { Controller } from '../src/controller/index.js';
import type { SessionView } from '../src/controller/service.js';
import { errorMessage } from '../src/shared/errors.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, ROOT } from '../test/k8s/support/berth.js';
import { clusterEnv } from '../test/k8s/support/env.js';
import { createTestRepo } from '../test/k8s/support/git.js';
import { loadKubeConfig } from '../test/k8s/support/kube.js';
import { createTestNamespace } from '../test/k8s/support/namespace.js';
import { measureFloor, type FloorSample } from './k8s/floor.js';
import { benchMachine, berthCommit } from './k8s/machine.js';
import { writeBenchmarksMd } from './k8s/report.js';
import { summarizeAll } from './k8s/stats.js';

const N = Math.max(1, Number.parseInt(process.env.BENCH_N ?? '10', 10) || 10);
const CONCURRENT = 10;
const STAGES = ['storage', 'pod_ready', 'bootstrap', 'agentctl_connect', 'agent_start'] as const;

/** A process in the Pod: pid, VmRSS in KiB, argv joined by spaces. */
export interface PodProcess {
  pid: number;
  rssKiB: number;
  cmdline: string;
}

/** Every process of the session's Pod with its VmRSS (the script itself never names agentctl). */
async function podProcesses(c: Controller, id: string): Promise<PodProcess[]> {
  const script = [
    'for d in /proc/[0-9]*; do',
    '  p=${d#/proc/}; [ "$p" = "$$" ] && continue',
    '  c=$(tr "\\0" " " < "$d/cmdline" 2>/dev/null) || continue',
    '  r=$(sed -n "s/^VmRSS:[^0-9]*\\([0-9]*\\).*/\\1/p" "$d/status" 2>/dev/null)',
    '  [ -n "$r" ] && echo "$p|$r|$c"',
    'done; true',
  ].join('\n');
  const res = await execText(c, id, ['sh', '-c', script]);
  return res.stdout
    .split('\n')
    .filter((l) => l.includes('|'))
    .map((l) => {
      const [pid, rss, ...rest] = l.split('|');
      return { pid: Number(pid), rssKiB: Number(rss), cmdline: rest.join('|').trim() };
    });
}

/** agentctl's own process (PID 1 after the start script's exec, else the first agentctl that is not the agent). */
function agentctlProcess(ps: PodProcess[]): PodProcess | undefined {
  const candidates = ps.filter((p) => /agentctl/.test(p.cmdline) && !/demo-agent/.test(p.cmdline)).sort((a, b) => a.pid - b.pid);
  return candidates[0];
}

function stageMs(v: SessionView, name: string): number {
  return v.stages.find((s) => s.name === name)?.durationMs ?? Number.NaN;
}

// a full GC before each memory reading, so the figures are not the garbage of earlier phases
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** RSS and heap in use of this process (which hosts the controller), after a full GC, in MiB. */
async function memoryMiB(): Promise<{ rss: number; heap: number }> {
  await sleep(2000);
  gc();
  await sleep(200);
  const m = process.memoryUsage();
  return { rss: m.rss / (1 << 20), heap: m.heapUsed / (1 << 20) };
}

function machineInfo(serverVersion: string): Record<string, unknown> {
  const size = (f: string): number => statSync(join(ROOT, 'dist', f)).size;
  return {
    ...benchMachine(ROOT, serverVersion, loadavg()),
    berth_commit: berthCommit(ROOT),
    agentctl_bundle_bytes: size('agentctl.cjs'),
    agentctl_sea_bytes: size('agentctl-sea'),
  };
}

async function main(): Promise<void> {
  const env = clusterEnv();
  const admin = loadKubeConfig(env.kubeconfig);
  const version = await admin.makeApiClient(VersionApi).getCode();
  const repo = await createTestRepo('bench', { 'README.md': '# bench\n' });
  const h = await berthOnCluster({
    prefix: 'bench',
    profiles: {
      k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } },
      bundle: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'empty_dir' } },
      sea: { pod_template: imageTemplate(env.busyboxImage), workspace: { mode: 'empty_dir' } },
    },
  });
  const floorNs = await createTestNamespace(admin, 'bench-floor', { podSecurity: 'restricted' });
  const machine = machineInfo(version.gitVersion);
  const samples: Record<string, number[]> = {};
  const add = (k: string, v: number): void => void (samples[k] ??= []).push(v);
  const extra: Record<string, unknown> = {};
  const c = (): Controller => h.controller;
  // The moment each session's `ready` state is emitted (what `berth launch` waits for), taken
  // synchronously: launchReady's return comes one agent-status round trip later (its view).
  const readyAt = new Map<string, number>();
  h.controller.subscribe((e) => {
    if (e.type === 'state' && e.state === 'ready') readyAt.set(e.sessionId, performance.now());
  });
  const untilReady = (id: string, since: number): number => {
    const at = readyAt.get(id);
    readyAt.delete(id);
    if (at === undefined || at < since) throw new Error(`session ${id}: no ready event since the call`);
    return at - since;
  };
  // A floor Pod the cluster never starts (seen once: a PVC-backed Pod left unscheduled) is reported, not fatal.
  const floorFailures: string[] = [];
  extra.floor_failures = floorFailures;
  const floor = async (name: string, withPvc: boolean, kind: 'nopvc' | 'pvc' | 'burst'): Promise<FloorSample | null> => {
    try {
      const f = await measureFloor(admin, floorNs.name, env.agentImage, name, withPvc);
      add(`floor.api.${kind}`, f.apiMs);
      add(`floor.real.${kind}`, f.realMs);
      add(`floor.exec_attempts.${kind}`, f.attempts);
      return f;
    } catch (err) {
      floorFailures.push(errorMessage(err));
      console.warn(`floor sample failed: ${errorMessage(err)}`);
      return null;
    }
  };
  try {
    // 1 + 3: sequential launches with a PVC, each with stop → resume, interleaved with the floors
    for (let i = 0; i < N; i++) {
      await floor(`floor-nopvc-${i}`, false, 'nopvc');
      const fPvc = await floor(`floor-pvc-${i}`, true, 'pvc');

      const t0 = performance.now();
      const v = await launchReady(c(), { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
      add('launch.call_to_view', performance.now() - t0);
      add('launch.total', untilReady(v.id, t0));
      for (const st of STAGES) add(`launch.${st}`, stageMs(v, st));
      const pod = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items[0];
      const created = pod?.metadata?.creationTimestamp;
      const started = pod?.status?.containerStatuses?.[0]?.state?.running?.startedAt;
      if (created && started) add('launch.kubelet_create_to_started_s', (new Date(started).getTime() - new Date(created).getTime()) / 1000);
      if (i === 0) {
        const ps = await podProcesses(c(), v.id);
        extra.agentctl_processes_bundle_pvc = ps;
        const agentctl = agentctlProcess(ps);
        if (agentctl) add('rss.agentctl_bundle_kib', agentctl.rssKiB);
      }
      let t = performance.now();
      await c().stop(v.id);
      add('stop', performance.now() - t);
      t = performance.now();
      const r = await c().resume(v.id);
      add('resume.total', untilReady(v.id, t));
      for (const st of STAGES) add(`resume.${st}`, stageMs(r, st));
      t = performance.now();
      await c().remove(v.id);
      add('rm', performance.now() - t);
      console.log(`[${i + 1}/${N}] launch ${samples['launch.total']!.at(-1)!.toFixed(0)} ms, floors api ${fPvc?.apiMs.toFixed(0) ?? '-'} / real ${fPvc?.realMs.toFixed(0) ?? '-'} ms (pvc), resume ${samples['resume.total']!.at(-1)!.toFixed(0)} ms`);
    }

    // 1: agentctl delivery, bundle (agent image) against SEA (busybox), no repository, no PVC
    for (let i = 0; i < N; i++) {
      for (const flavor of ['bundle', 'sea'] as const) {
        const t0 = performance.now();
        const v = await launchReady(c(), { executor: flavor, env: FAST_AGENT_ENV });
        add(`delivery.${flavor}.total`, untilReady(v.id, t0));
        add(`delivery.${flavor}.bootstrap`, stageMs(v, 'bootstrap'));
        add(`delivery.${flavor}.pod_ready`, stageMs(v, 'pod_ready'));
        if (i === 0 && flavor === 'sea') {
          const ps = await podProcesses(c(), v.id);
          extra.agentctl_processes_sea = ps;
          const agentctl = agentctlProcess(ps);
          if (agentctl) add('rss.agentctl_sea_kib', agentctl.rssKiB);
        }
        await c().remove(v.id);
      }
    }
    console.log(`delivery: ${N} bundle + ${N} SEA launches done`);

    // 4 + 7: 10 concurrent launches; controller RSS with 0 and 10 connected sessions
    // 4: the floor of a burst: 10 bare Pods with a PVC created together (what the cluster itself
    // takes for 10 at once on this machine), next to Berth's 10
    await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => floor(`floor-burst-${i}`, true, 'burst')));
    console.log(`burst floor: ${samples['floor.real.burst']?.length ?? 0}/${CONCURRENT} Pods took an exec`);
    const mem0 = await memoryMiB();
    add('rss.controller_0_sessions_mib', mem0.rss);
    add('heap.controller_0_sessions_mib', mem0.heap);
    const t0 = performance.now();
    const settled = await Promise.allSettled(
      Array.from({ length: CONCURRENT }, async () => {
        const v = await launchReady(c(), { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
        add('concurrent.total', untilReady(v.id, t0));
        for (const st of STAGES) add(`concurrent.${st}`, stageMs(v, st));
        return v.id;
      }),
    );
    add('concurrent.wall_all_ready', Math.max(...(samples['concurrent.total'] ?? [Number.NaN])));
    const ids = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    extra.concurrent_failures = settled.flatMap((s) => (s.status === 'rejected' ? [String(s.reason).slice(0, 500)] : []));
    const mem10 = await memoryMiB();
    add('rss.controller_10_sessions_mib', mem10.rss);
    add('heap.controller_10_sessions_mib', mem10.heap);
    extra.controller_connected_sessions = ids.length;
    await Promise.allSettled(ids.map((id) => c().remove(id)));
    console.log(`concurrent: ${ids.length}/${CONCURRENT} ready`);
  } finally {
    await h.close();
    await floorNs.cleanup().catch(() => undefined);
    await repo.remove();
  }

  const rows = summarizeAll(samples);
  console.table(rows);
  const out = {
    at: new Date().toISOString(),
    machine,
    setup: {
      n: N,
      concurrent: CONCURRENT,
      agent: 'demo (BERTH_DEMO_STEP_MS=0)',
      launch_profile: 'agent image, managed PVC 1Gi, git:// clone of a 1-commit repository, as the executor ServiceAccount',
      delivery_profiles: 'no repository, emptyDir workspace: agent image (bundle) and busybox (SEA)',
      floor_pods: 'agent image running `sleep 3600`, restricted security context, as the admin kubeconfig; with PVC: 1Gi default StorageClass mounted at /data',
      units: 'milliseconds unless the name ends in _s, _kib or _mib',
    },
    rows,
    samples,
    extra,
  };
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'k8s-launch.json'), `${JSON.stringify(out, null, 2)}\n`);
  writeBenchmarksMd(ROOT);
  console.log('wrote bench/results/k8s-launch.json and BENCHMARKS.md');
}

await main();
