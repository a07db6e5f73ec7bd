// A managed workspace claim binds before its Pod is created (an Immediate class), and a
// WaitForFirstConsumer class is not waited for (the Pod is what makes it bind), on the real cluster.
// Created together, the claim and the Pod race: the kubelet failed the mount and backed off ~10 s in
// 1 to 5 of 10 launches at once (bench), which waiting for the binding removed.
import { randomBytes } from 'node:crypto';
import { StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';

const env = clusterEnv();
const WFFC_CLASS = `berth-test-wffc-${randomBytes(3).toString('hex')}`;

describe('kubernetes executor: the workspace claim before the Pod', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;
  let storage: StorageV1Api;

  beforeAll(async () => {
    repo = await createTestRepo('claim', { 'README.md': '# claim\n' });
    h = await berthOnCluster({
      prefix: 'claim',
      profiles: {
        immediate: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } },
        wffc: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi', storage_class: WFFC_CLASS } },
      },
    });
    storage = h.admin.makeApiClient(StorageV1Api);
    await storage.createStorageClass({
      body: { metadata: { name: WFFC_CLASS }, provisioner: 'kubernetes.io/host-path', reclaimPolicy: 'Delete', volumeBindingMode: 'WaitForFirstConsumer' },
    });
  });

  afterAll(async () => {
    await h?.close();
    await storage?.deleteStorageClass({ name: WFFC_CLASS }).catch(() => undefined);
    await repo?.remove();
  });

  const storageWaits = (v: { stages: { name: string; waits?: { reason: string | null }[] }[] }): (string | null)[] =>
    (v.stages.find((s) => s.name === 'storage')?.waits ?? []).map((w) => w.reason);

  it('an Immediate class: the claim is bound when the Pod is created', async () => {
    const v = await launchReady(h.controller, { repository: { url: repo.url }, executor: 'immediate', env: FAST_AGENT_ENV });
    expect(storageWaits(v as never)).toEqual(['ClaimBound']);
    expect((await execText(h.controller, v.id, ['cat', 'README.md'])).stdout).toBe('# claim\n');
    await h.controller.remove(v.id);
  });

  it('a WaitForFirstConsumer class: the Pod is created without waiting, and the claim binds once it is scheduled', async () => {
    const v = await launchReady(h.controller, { repository: { url: repo.url }, executor: 'wffc', env: FAST_AGENT_ENV });
    expect(storageWaits(v as never)).toEqual(['WaitForFirstConsumer']);
    const [pvc] = (await h.core.listNamespacedPersistentVolumeClaim({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items;
    expect(pvc?.spec?.storageClassName).toBe(WFFC_CLASS);
    expect(pvc?.status?.phase).toBe('Bound');
    expect((await execText(h.controller, v.id, ['cat', 'README.md'])).stdout).toBe('# claim\n');
    await h.controller.remove(v.id);
    expect(await h.leftovers()).toEqual([]);
  });
});
