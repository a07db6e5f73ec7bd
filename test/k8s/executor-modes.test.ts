// Workspace modes on the real cluster: empty_dir (stop keeps the Pod and only stops the agent; rm
// deletes the Pod) and existing_claim (an operator's claim is mounted, never created or deleted).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRepo, type TestRepo } from './support/git.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, waitForOutput, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';

const env = clusterEnv();

describe.concurrent('kubernetes executor: workspace modes', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    repo = await createTestRepo('modes', { 'README.md': '# modes\n', BERTH_MARKER: 'marker-modes\n' });
    h = await berthOnCluster({
      prefix: 'modes',
      profiles: {
        scratch: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'empty_dir' } },
        team: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'existing_claim', claim_name: 'team-claim' } },
      },
    });
    await h.core.createNamespacedPersistentVolumeClaim({
      namespace: h.ns.name,
      body: { metadata: { name: 'team-claim' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    });
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
  });

  it('empty_dir: stop keeps the Pod (and the work) and stops only the agent; resume restarts the agent; rm deletes the Pod', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'scratch', env: FAST_AGENT_ENV });
    await waitForOutput(c, v.id, /ready for instructions/);
    const pods = () => h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` }).then((l) => l.items);
    const uid = (await pods())[0]?.metadata?.uid;
    expect((await h.core.listNamespacedPersistentVolumeClaim({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items, 'no PVC').toHaveLength(0);

    expect((await c.stop(v.id)).state).toBe('stopped');
    expect((await pods()).map((p) => p.metadata?.uid), 'the Pod stays: deleting it would lose the work').toEqual([uid]);
    const resumed = await c.resume(v.id);
    expect(resumed.state).toBe('ready');
    expect(resumed.agentProcess).toMatchObject({ id: 'agent-2', status: 'running' });
    expect((await pods()).map((p) => p.metadata?.uid), 'the same Pod').toEqual([uid]);
    expect((await execText(c, v.id, ['cat', 'NOTES.md'])).stdout, 'the work is still there').toContain('Task:');

    await c.remove(v.id);
    expect(await pods()).toHaveLength(0);
  });

  it('existing_claim: mounts the operator\'s claim, keeps it on rm', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'team', env: FAST_AGENT_ENV });
    expect((await execText(c, v.id, ['sh', '-c', 'echo from-session > team-file && cat BERTH_MARKER'])).stdout).toBe('marker-modes\n');
    const claim = await h.core.readNamespacedPersistentVolumeClaim({ namespace: h.ns.name, name: 'team-claim' });
    expect(claim.metadata?.labels?.['app.kubernetes.io/managed-by'], 'Berth does not label a claim it did not create').toBeUndefined();

    await c.remove(v.id);
    expect((await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items).toHaveLength(0);
    const after = await h.core.readNamespacedPersistentVolumeClaim({ namespace: h.ns.name, name: 'team-claim' });
    expect(after.metadata?.uid, 'the existing claim is never deleted').toBe(claim.metadata?.uid);
    expect(after.metadata?.deletionTimestamp).toBeUndefined();
  });
});
