/**
 * Concurrency on Kubernetes sessions (issue 9, spec §10): operations on one session serialize (the
 * outcome is always one of the states the operations can end in, with the cluster matching it);
 * another session never waits for a slow one; a stop during a replacement is honoured.
 * @module
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRepo, type TestRepo } from './support/git.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';

const env = clusterEnv();

describe('kubernetes executor: concurrent operations', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    repo = await createTestRepo('concurrency', { 'README.md': '# concurrency\n', BERTH_MARKER: 'marker-concurrency\n' });
    h = await berthOnCluster({
      prefix: 'concurrency',
      profiles: {
        k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } },
        // A launch that takes a while in bootstrap (its setup script sleeps), for "does not wait".
        slow: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' }, setup_script: 'sleep 15' },
      },
    });
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
  });

  const podsOf = async (id: string) => (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${id}` })).items;
  const pvcsOf = async (id: string) => (await h.core.listNamespacedPersistentVolumeClaim({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${id}` })).items;

  /** The cluster matches the session's state: ready → a Pod that answers; stopped → no Pod, the PVC kept. */
  async function expectConsistent(id: string): Promise<void> {
    const c = h.controller;
    const v = await c.waitUntilSettled(id);
    if (v.state === 'ready') {
      expect((await execText(c, id, ['cat', 'BERTH_MARKER'])).stdout).toBe('marker-concurrency\n');
      expect((await podsOf(id)).filter((p) => !p.metadata?.deletionTimestamp)).toHaveLength(1);
    } else {
      expect(v.state, v.error?.message ?? '').toBe('stopped');
      for (let i = 0; i < 60 && (await podsOf(id)).length > 0; i++) await new Promise((r) => setTimeout(r, 500));
      expect(await podsOf(id)).toHaveLength(0);
    }
    expect(await pvcsOf(id)).toHaveLength(1);
  }

  it('serializes stop, resume and exec of one session: it ends in a state the cluster matches, every time', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    for (let round = 0; round < 3; round++) {
      const results = await Promise.allSettled([c.stop(v.id), c.resume(v.id), execText(c, v.id, ['true']), c.stop(v.id), c.resume(v.id)]);
      // Refusals are allowed (resume of a ready session, exec of a stopped one) but only as clear errors.
      for (const r of results) if (r.status === 'rejected') expect(String(r.reason)).not.toMatch(/undefined|TypeError|SQLITE/);
      await expectConsistent(v.id);
    }
    // rm racing a resume: the session goes, with everything it had.
    await c.stop(v.id);
    await Promise.allSettled([c.resume(v.id), c.remove(v.id)]);
    await c.remove(v.id).catch(() => undefined); // when the resume won, remove after it
    await expect(c.get(v.id)).rejects.toThrow(/not found/);
    expect(await podsOf(v.id)).toHaveLength(0);
    for (let i = 0; i < 60 && (await pvcsOf(v.id)).length > 0; i++) await new Promise((r) => setTimeout(r, 500));
    expect(await pvcsOf(v.id)).toHaveLength(0);
  });

  it('never makes one session wait for another: an exec answers while a slow launch is still in bootstrap', async () => {
    const c = h.controller;
    const fast = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    const slow = await c.launch({ repository: { url: repo.url }, executor: 'slow', env: FAST_AGENT_ENV });
    /** A stage under way: running, or waiting on something the cluster reported. */
    const inProgress = (status: string | undefined): boolean => status === 'running' || status === 'waiting';
    try {
      // Wait until the slow launch is in its bootstrap stage (its setup script sleeping).
      for (let i = 0; i < 240; i++) {
        const s = await c.get(slow.id);
        if (s.stages.some((st) => st.name === 'bootstrap' && inProgress(st.status))) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(inProgress((await c.get(slow.id)).stages.find((st) => st.name === 'bootstrap')?.status)).toBe(true);
      const answer = await execText(c, fast.id, ['cat', 'BERTH_MARKER']);
      expect(answer.stdout).toBe('marker-concurrency\n');
      expect((await c.stop(fast.id)).state).toBe('stopped');
      // The other session's launch was still going while all of that was served.
      expect((await c.get(slow.id)).state).toBe('launching');
      expect((await c.waitUntilSettled(slow.id)).state).toBe('ready');
    } finally {
      await c.remove(fast.id).catch(() => undefined);
      await c.waitUntilSettled(slow.id).catch(() => undefined);
      await c.remove(slow.id).catch(() => undefined);
    }
  });

  it('honours a stop that arrives while a deleted Pod is being replaced', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    const [pod] = await podsOf(v.id);
    await h.core.deleteNamespacedPod({ namespace: h.ns.name, name: pod!.metadata!.name!, gracePeriodSeconds: 0 });
    for (let i = 0; i < 60 && (await podsOf(v.id)).length > 0; i++) await new Promise((r) => setTimeout(r, 500));
    // The exec starts the replacement (which first reports why); the stop arrives while it runs.
    const replacing = new Promise<void>((resolve) => {
      const off = c.subscribe((e) => (e.type === 'diagnostic' && e.reason === 'PodDeleted' ? (off(), resolve()) : undefined), { sessionId: v.id });
    });
    const exec = execText(c, v.id, ['true']).catch((err: unknown) => err);
    await replacing;
    const stopped = await c.stop(v.id);
    await exec;
    expect(stopped.state).toBe('stopped');
    const settled = await c.waitUntilSettled(v.id);
    expect(settled.state, 'the stop is not undone by the replacement').toBe('stopped');
    for (let i = 0; i < 60 && (await podsOf(v.id)).length > 0; i++) await new Promise((r) => setTimeout(r, 500));
    expect(await podsOf(v.id), 'no Pod left running after the stop').toHaveLength(0);
    expect(await pvcsOf(v.id), 'the PVC is kept').toHaveLength(1);
    const resumed = await c.resume(v.id);
    expect((await c.waitUntilSettled(resumed.id)).state).toBe('ready');
    await c.remove(v.id);
    expect([...(await podsOf(v.id)), ...(await pvcsOf(v.id))]).toEqual([]);
  });
});
