// A stop on Kubernetes stops the agent for real before it returns: the Pod is deleted gracefully,
// the agent gets SIGTERM and time to save its work, and when `stop` returns nothing of the Pod runs
// on the node any more (read from the cluster's containerd) — so a resume right after it cannot meet
// the old agent, and takes the Pod as soon as it accepts an exec.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berthOnCluster, execText, imageTemplate, launchReady, waitForOutput, type BerthOnCluster } from './support/berth.js';
import { clusterEnv, requireEnv } from './support/env.js';

const env = clusterEnv();
const sock = requireEnv('BERTH_TEST_CONTAINERD_SOCK');
const ctr = (...args: string[]): string => execFileSync('ctr', ['--address', sock, '--namespace', 'k8s.io', ...args], { encoding: 'utf8', timeout: 30_000 });

/** Ids of the containers containerd runs (a task in state RUNNING) for the Pod with `uid`. */
function runningContainersOf(uid: string): string[] {
  const ids = ctr('containers', 'list', '--quiet', `labels."io.kubernetes.pod.uid"==${uid}`).split('\n').filter(Boolean);
  const running = new Set(
    ctr('tasks', 'list')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((cols) => cols[2] === 'RUNNING')
      .map((cols) => cols[0]),
  );
  return ids.filter((id) => running.has(id));
}

describe('kubernetes executor: stop', () => {
  let h: BerthOnCluster;

  beforeAll(async () => {
    h = await berthOnCluster({
      prefix: 'stop',
      profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
      // saves on SIGTERM, as an agent that flushes its work would (the trap runs between two sleeps)
      agents: { saver: { command: ['sh', '-c', 'trap "echo saved-on-term >/workspace/saved; exit 0" TERM; echo started; while :; do sleep 0.2; done'] } },
    });
  });

  afterAll(async () => {
    await h?.close();
  });

  it('returns once the agent got SIGTERM and the Pod stopped running on the node; a resume right after finds the saved work', async () => {
    const c = h.controller;
    const v = await launchReady(c, { agent: 'saver', executor: 'k8s' });
    await waitForOutput(c, v.id, /started/);
    const [pod] = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items;
    const uid = pod?.metadata?.uid ?? '';
    expect(uid).not.toBe('');
    expect(runningContainersOf(uid).length).toBeGreaterThan(0);

    expect((await c.stop(v.id)).state).toBe('stopped');
    // at once: no wait, no retry
    expect(runningContainersOf(uid)).toEqual([]);
    expect((await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items).toEqual([]);

    const r = await c.resume(v.id);
    expect(r.state).toBe('ready');
    expect(await execText(c, v.id, ['cat', '/workspace/saved'])).toMatchObject({ exitCode: 0, stdout: 'saved-on-term\n' });
    const [again] = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items;
    expect(again?.metadata?.uid).not.toBe(uid);

    await c.remove(v.id);
    expect(await h.leftovers()).toEqual([]);
  });
});
