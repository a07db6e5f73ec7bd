/**
 * Where one Kubernetes launch's time goes, event by event (`npm run bench:trace`; needs the running
 * test cluster and `eval "$(bash test/cluster/cluster.sh env)"`): N sequential launches (BENCH_N,
 * default 8; the first warms the image probe and is not counted) of the `bench:k8s` profile, each
 * removed after. Every controller event (stage start, waiting reason, end; state) is timestamped
 * with `performance.now()` as the controller emits it, and agentctl's own log lines in the Pod
 * (listening, handshake accepted, instance created, process started; pino's millisecond `time`, the
 * same clock on this one-machine cluster) are put on the same timeline. Prints each launch's
 * timeline and the p50 of the first occurrence of each event. BENCH_REPO=0 launches without a
 * repository (no clone overlaps agentctl's start). Measures only; writes nothing.
 * @module
 */
import { performance } from 'node:perf_hooks';
import type { SessionEvent } from '../src/controller/service.js';
import { berthOnCluster, FAST_AGENT_ENV, imageTemplate, launchReady } from '../test/k8s/support/berth.js';
import { clusterEnv } from '../test/k8s/support/env.js';
import { createTestRepo } from '../test/k8s/support/git.js';
import { pct } from './k8s/stats.js';

const N = Math.max(2, Number.parseInt(process.env.BENCH_N ?? '8', 10) || 8);
const WITH_REPO = process.env.BENCH_REPO !== '0';

interface Mark {
  event: string;
  t: number;
}

/** agentctl's JSON log lines as marks on the launch's clock (`wall0`: the wall time of its zero). */
function podMarks(log: string, wall0: number): Mark[] {
  const marks: Mark[] = [];
  for (const line of log.split('\n')) {
    try {
      const j = JSON.parse(line) as { time?: unknown; msg?: unknown };
      if (typeof j.time === 'number' && typeof j.msg === 'string') marks.push({ event: `agentctl: ${j.msg}`, t: j.time - wall0 });
    } catch {
      // not a log line of agentctl's (the agent's own output)
    }
  }
  return marks;
}

async function main(): Promise<void> {
  const env = clusterEnv();
  const repo = await createTestRepo('trace', { 'README.md': '# trace\n' });
  const h = await berthOnCluster({
    prefix: 'trace',
    profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
  });
  const firsts: Record<string, number[]> = {};
  try {
    for (let i = 0; i < N; i++) {
      const marks: Mark[] = [];
      const t0 = performance.now();
      const wall0 = Date.now();
      const off = h.controller.subscribe((e: SessionEvent) => {
        const t = performance.now() - t0;
        if (e.type === 'stage') marks.push({ event: `${e.stage.name} ${e.stage.status}${e.stage.status === 'waiting' && e.stage.reason ? ` (${e.stage.reason})` : ''}`, t });
        if (e.type === 'state') marks.push({ event: `state ${e.state}`, t });
      });
      let v;
      try {
        v = await launchReady(h.controller, { ...(WITH_REPO ? { repository: { url: repo.url } } : {}), executor: 'k8s', env: FAST_AGENT_ENV });
      } finally {
        off();
      }
      const pod = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items[0];
      const log = await h.core.readNamespacedPodLog({ namespace: h.ns.name, name: pod?.metadata?.name ?? '', container: 'agent' }).catch(() => '');
      marks.push(...podMarks(String(log), wall0));
      await h.controller.remove(v.id);
      marks.sort((a, b) => a.t - b.t);
      console.log(`launch ${i}${i === 0 ? ' (warm-up, not counted)' : ''}:\n${marks.map((m) => `  ${m.t.toFixed(0).padStart(5)} ms  ${m.event}`).join('\n')}`);
      if (i === 0) continue;
      const seen = new Set<string>();
      for (const m of marks) {
        if (seen.has(m.event)) continue;
        seen.add(m.event);
        (firsts[m.event] ??= []).push(m.t);
      }
    }
  } finally {
    await h.close();
    await repo.remove();
  }
  const rows = Object.entries(firsts)
    .map(([event, v]) => ({ event, n: v.length, p50: Math.round(pct(v, 50)), min: Math.round(Math.min(...v)), max: Math.round(Math.max(...v)) }))
    .sort((a, b) => a.p50 - b.p50);
  console.table(rows);
}

await main();
