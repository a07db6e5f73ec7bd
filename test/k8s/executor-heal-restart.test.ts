// Sessions heal by themselves (issue 9): a controller restarted while a session is ready watches it
// again, so a Pod deleted after the restart is replaced without a command and the agent started
// again; and a Pod evicted through the Eviction API (what a node drain does) comes back the same way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRepo, type TestRepo } from './support/git.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, waitForOutput, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { waitForDiagnostic } from './support/failures.js';

const env = clusterEnv();

describe('kubernetes executor: healing after a controller restart', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    repo = await createTestRepo('heal-restart', { 'README.md': '# heal\n', BERTH_MARKER: 'marker-heal\n' });
    h = await berthOnCluster({ prefix: 'heal-restart', profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } } });
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
  });

  it('replaces a Pod deleted after the restart by itself, on the same PVC, with the agent started again', async () => {
    const v = await launchReady(h.controller, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    await waitForOutput(h.controller, v.id, /ready for instructions/);
    const c = await h.restart();
    expect((await c.get(v.id)).state).toBe('ready');
    const restarted = waitForDiagnostic(c, v.id, 'AgentRestarted', 'after the Pod was deleted: the restarted controller did not watch the session');
    const [pod] = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items;
    await h.core.deleteNamespacedPod({ namespace: h.ns.name, name: pod!.metadata!.name!, gracePeriodSeconds: 0 });
    // No command is sent: the watch of the restarted controller brings it back.
    await restarted;
    const view = await c.get(v.id);
    expect(view.stages.find((s) => s.name === 'pod_replaced')).toMatchObject({ reason: 'PodDeleted' });
    expect(view.agentProcess).toMatchObject({ id: 'agent-2', status: 'running' });
    expect((await execText(c, v.id, ['cat', 'BERTH_MARKER'])).stdout).toBe('marker-heal\n');
    await c.remove(v.id);
    expect(await h.leftovers()).toEqual([]);
  });

  it('brings a session back after its Pod is evicted through the Eviction API (as a drain does)', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    await waitForOutput(c, v.id, /ready for instructions/);
    const restarted = waitForDiagnostic(c, v.id, 'AgentRestarted', 'after the eviction');
    const [pod] = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items;
    const name = pod!.metadata!.name!;
    await h.core.createNamespacedPodEviction({ name, namespace: h.ns.name, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: h.ns.name } } });
    await restarted;
    const view = await c.get(v.id);
    expect(view.stages.find((s) => s.name === 'pod_replaced')?.reason).toMatch(/^Pod(Deleted|Deleting|Evicted)$/);
    expect(view.agentProcess).toMatchObject({ id: 'agent-2', status: 'running' });
    const [after] = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items.filter((p) => !p.metadata?.deletionTimestamp);
    expect(after?.metadata?.uid).not.toBe(pod?.metadata?.uid);
    expect((await execText(c, v.id, ['cat', 'BERTH_MARKER'])).stdout).toBe('marker-heal\n');
    await c.remove(v.id);
    expect(await h.leftovers()).toEqual([]);
  });
});
