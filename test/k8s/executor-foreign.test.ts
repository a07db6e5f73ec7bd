// Foreign objects in a launch's way (issue 9): a Pod that someone else created under the name the
// launch is about to use is never adopted and never deleted — whether it is a plain Pod (the create
// is refused with AlreadyExists) or one carrying Berth's labels with another create nonce, found
// by the read-back after an ambiguous create. The launch fails saying so, and rolls back only what
// it created (its PVC, by UID). The fault proxy (support/api-proxy.ts) holds Berth's request back
// long enough for the test to create the foreign Pod first, deterministically. And rm of a session
// whose recorded Pod was swapped for a foreign one (while the controller was down) deletes nothing.
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATION } from '../../src/executors/kubernetes/constants.js';
import { startApiProxy, type ApiProxy } from './support/api-proxy.js';
import { SessionNotFoundError } from '../../src/controller/index.js';
import { berthOnCluster, FAST_AGENT_ENV, imageTemplate, launchReady, type BerthOnCluster } from './support/berth.js';
import { clusterEnv, requireEnv } from './support/env.js';
import { sessionLeftovers, stageOf } from './support/failures.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { loadKubeConfig } from './support/kube.js';
import { restrictedPod } from './support/pods.js';
import { waitForPodGone } from './support/wait.js';

const env = clusterEnv();
const HOLD_MS = 4_000;

describe('kubernetes executor: a foreign Pod under the launch name', () => {
  let proxy: ApiProxy;
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    const admin = loadKubeConfig(env.kubeconfig);
    proxy = await startApiProxy(admin.getCurrentCluster()!.server, `${requireEnv('BERTH_CLUSTER_CACHE')}/pki`);
    repo = await createTestRepo('foreign', { 'README.md': '# foreign\n' });
    h = await berthOnCluster({
      prefix: 'foreign',
      profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
      kubeconfigFor: (path) => proxy.kubeconfigFor(path),
    });
  });

  afterEach(() => proxy?.clearRules());

  afterAll(async () => {
    await h?.close();
    await proxy?.close();
    await repo?.remove();
  });

  const podsPath = () => new RegExp(`^/api/v1/namespaces/${h.ns.name}/pods(\\?|$)`);

  /** The launch's PVC once it exists (its name gives the Pod's: berth-<suffix>-workspace → berth-<suffix>). */
  async function launchPvc(sessionId: string): Promise<{ podName: string; labels: Record<string, string> }> {
    for (let i = 0; i < 200; i++) {
      const [pvc] = (await h.core.listNamespacedPersistentVolumeClaim({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${sessionId}` })).items;
      const name = pvc?.metadata?.name;
      if (name) return { podName: name.replace(/-workspace$/, ''), labels: { ...pvc.metadata?.labels } };
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no PVC for ${sessionId}`);
  }

  async function createForeign(name: string, labels: Record<string, string>, annotations: Record<string, string> = {}): Promise<V1Pod> {
    const pod = restrictedPod({ name, image: env.busyboxImage, command: ['sleep', '3600'], labels, terminationGracePeriodSeconds: 0 });
    pod.metadata = { ...pod.metadata, annotations };
    return h.core.createNamespacedPod({ namespace: h.ns.name, body: pod });
  }

  async function expectUntouched(foreign: V1Pod): Promise<void> {
    const now = await h.core.readNamespacedPod({ namespace: h.ns.name, name: foreign.metadata!.name! });
    expect(now.metadata?.uid, 'the foreign Pod is the same object').toBe(foreign.metadata?.uid);
    expect(now.metadata?.deletionTimestamp, 'and nobody is deleting it').toBeUndefined();
    await h.core.deleteNamespacedPod({ namespace: h.ns.name, name: foreign.metadata!.name!, gracePeriodSeconds: 0 });
  }

  it('a plain Pod already under the name: the create is refused, nothing is adopted or deleted, the PVC is rolled back', async () => {
    const hold = proxy.add({ method: 'POST', path: podsPath(), times: 1, action: { kind: 'delay', ms: HOLD_MS } });
    const s = await h.controller.launch({ repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    const { podName } = await launchPvc(s.id);
    const foreign = await createForeign(podName, { app: 'someone-else' });
    const v = await h.controller.waitUntilSettled(s.id);
    expect(hold.hits(), 'Berth’s create was held back').toBe(1);
    expect(v.state).toBe('failed');
    expect(stageOf(v, 'pod_ready').status).toBe('failed');
    expect(v.error?.message).toMatch(/already exists/i);
    expect(await sessionLeftovers(h, s.id), 'the launch left nothing of its own').toEqual([]);
    await expectUntouched(foreign);
    await h.controller.remove(s.id);
  });

  it("a Pod with Berth's labels but another create nonce, found after an ambiguous create: not adopted, not deleted", async () => {
    // Berth's create is refused before it reaches the API server (ambiguous: 503), and its read-back
    // by name is held back while the foreign Pod appears under that name.
    const refuse = proxy.add({ method: 'POST', path: podsPath(), times: 1, action: { kind: 'fail-before', status: 503 } });
    const hold = proxy.add({ method: 'GET', path: new RegExp(`^/api/v1/namespaces/${h.ns.name}/pods/berth-[0-9a-f]+$`), times: 1, action: { kind: 'delay', ms: HOLD_MS } });
    const s = await h.controller.launch({ repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    const { podName, labels } = await launchPvc(s.id);
    const foreign = await createForeign(podName, labels, { [ANNOTATION.createNonce]: 'f'.repeat(64) });
    const v = await h.controller.waitUntilSettled(s.id);
    expect(refuse.hits()).toBe(1);
    expect(hold.hits(), 'the read-back was held back').toBe(1);
    expect(v.state).toBe('failed');
    expect(v.error?.message, 'says it is not the one this launch created').toMatch(/not the one this launch created/);
    expect(v.error?.message).toMatch(/left alone/);
    // Only the foreign Pod (it carries the session's labels) remains: the PVC was rolled back.
    expect(await sessionLeftovers(h, s.id)).toEqual([`pod/${podName}`]);
    await expectUntouched(foreign);
    await h.controller.remove(s.id);
  });

  it('rm of a session whose Pod was replaced by a foreign Pod of the same name deletes nothing', async () => {
    const v = await launchReady(h.controller, { repository: { url: repo.url }, executor: 'k8s', agent: 'demo', prompt: 'idle', env: FAST_AGENT_ENV });
    const sel = { namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` };
    const ours = (await h.core.listNamespacedPod(sel)).items[0]!;
    const pvc = (await h.core.listNamespacedPersistentVolumeClaim(sel)).items[0]!;
    const name = ours.metadata!.name!;

    // The swap happens while the controller is down: a running controller would heal the session
    // (replace its deleted Pod) before anyone else could take the name.
    await h.controller.close();
    await h.core.deleteNamespacedPod({ namespace: h.ns.name, name });
    await waitForPodGone(h.admin, h.ns.name, name);
    const impostor = restrictedPod({ name, image: env.busyboxImage, imagePullPolicy: 'Never', command: ['sleep', '3600'] });
    impostor.metadata!.labels = { ...ours.metadata!.labels };
    const foreign = await h.core.createNamespacedPod({ namespace: h.ns.name, body: impostor });
    expect(foreign.metadata!.uid).not.toBe(ours.metadata!.uid);
    const c = await h.restart();

    await expect(c.remove(v.id)).rejects.toThrow(/is not the one Berth recorded .*replaced by someone else, so nothing was deleted/);
    const still = await h.core.readNamespacedPod({ namespace: h.ns.name, name });
    expect(still.metadata?.uid, 'the foreign Pod is untouched').toBe(foreign.metadata!.uid);
    expect(still.metadata?.deletionTimestamp).toBeUndefined();
    const claim = await h.core.readNamespacedPersistentVolumeClaim({ namespace: h.ns.name, name: pvc.metadata!.name! });
    expect(claim.metadata?.uid, 'the session\'s PVC is still there').toBe(pvc.metadata!.uid);
    expect(claim.metadata?.deletionTimestamp).toBeUndefined();
    const failed = await c.get(v.id);
    expect(failed.state).toBe('failed');
    expect(failed.error?.message).toMatch(/^remove failed: .*replaced by someone else/);

    // By hand: the foreign Pod goes; then rm finds only what it recorded and removes it.
    await h.core.deleteNamespacedPod({ namespace: h.ns.name, name, body: { gracePeriodSeconds: 0 } });
    await waitForPodGone(h.admin, h.ns.name, name);
    await c.remove(v.id);
    expect(await sessionLeftovers(h, v.id)).toEqual([]);
    await expect(c.get(v.id)).rejects.toBeInstanceOf(SessionNotFoundError);
  });
});
