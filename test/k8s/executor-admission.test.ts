// The Kubernetes executor against a real mutating admission webhook (test/k8s/support/webhook.ts,
// registered by URL for this namespace only), driven through the controller as the executor's
// ServiceAccount. A webhook that moves ownership or lifecycle away from Berth (an owner reference, a
// finalizer), injects a reserved env key or a mount under /workspace, or changes an owned label, the
// create nonce or the PVC's storage request fails the launch with AdmissionMutated naming the
// finding, and the rollback deletes the objects by UID: nothing is left. Harmless additions (an
// unrelated label, a sidecar touching nothing reserved, an extra node selector) launch ready. A
// finalizer nobody removes keeps the object: the session ends failed saying so, its row kept.
// Each case has its own profile (the webhook's key); they share one namespace and run concurrently.
import type { CoreV1Api, V1ObjectMeta } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berthOnCluster, FAST_AGENT_ENV, imageTemplate, launchReady, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { launchFailing, sessionLeftovers, stageOf } from './support/failures.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { pointer, startMutatingWebhook, type AdmissionObject, type MutatingWebhook, type PatchOp } from './support/webhook.js';
import { restrictedContainerSecurityContext } from './support/pods.js';

const env = clusterEnv();
const PVC = { mode: 'managed_pvc', size: '1Gi' };
/** A finalizer the test's releaser removes once the object is being deleted (its "controller" is running). */
const RELEASED = 'berth-test.dev/released';
/** A finalizer nobody removes until the case says so (its controller is gone). */
const STUCK = 'berth-test.dev/stuck';

const CASES = [
  'owner-ref',
  'pod-finalizer',
  'reserved-env',
  'sidecar-mount',
  'owned-label',
  'nonce',
  'pvc-finalizer',
  'pvc-storage',
  'pvc-stuck',
  'unrelated-label',
  'sidecar',
  'node-selector',
] as const;

type Obj = AdmissionObject & { spec: { containers?: { name: string; env?: unknown[] }[]; nodeSelector?: Record<string, string> } };
const isPod = (o: AdmissionObject): boolean => o.kind === 'Pod';
const mainIndex = (o: Obj): number => (o.spec.containers ?? []).findIndex((c) => c.name === 'agent');
const addFinalizer = (o: AdmissionObject, f: string): PatchOp =>
  (o.metadata as V1ObjectMeta | undefined)?.finalizers ? { op: 'add', path: '/metadata/finalizers/-', value: f } : { op: 'add', path: '/metadata/finalizers', value: [f] };
const sidecar = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'injected',
  image: env.busyboxImage,
  imagePullPolicy: 'Never',
  command: ['sleep', '3600'],
  securityContext: { ...restrictedContainerSecurityContext(), runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
  ...extra,
});

describe.concurrent('kubernetes executor: objects changed by a mutating admission webhook', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;
  let hook: MutatingWebhook;
  let releaser: { stop(): Promise<void> };
  let nodeName: string;

  beforeAll(async () => {
    repo = await createTestRepo('admission', { 'README.md': '# admission\n' });
    h = await berthOnCluster({
      prefix: 'admission',
      profiles: Object.fromEntries(CASES.map((c) => [c, { pod_template: imageTemplate(env.agentImage), workspace: PVC }])),
    });
    const nodes = await h.core.listNode();
    nodeName = nodes.items[0]?.metadata?.labels?.['kubernetes.io/hostname'] ?? '';
    expect(nodeName, 'the test node has a hostname label').not.toBe('');
    // a real object for the owner reference (a Deployment-less ConfigMap: nothing garbage-collects the Pod early)
    const owner = await h.core.createNamespacedConfigMap({ namespace: h.ns.name, body: { metadata: { name: 'webhook-owner' }, data: {} } });
    hook = await startMutatingWebhook({ admin: h.admin, namespace: h.ns.name, keyLabel: 'berth.dev/profile' });
    const onPod = (name: string, f: (o: Obj) => PatchOp[]): void => hook.on(name, (o) => (isPod(o) ? f(o as Obj) : []));
    const onPvc = (name: string, f: (o: Obj) => PatchOp[]): void => hook.on(name, (o) => (isPod(o) ? [] : f(o as Obj)));
    onPod('owner-ref', () => [
      { op: 'add', path: '/metadata/ownerReferences', value: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'webhook-owner', uid: owner.metadata!.uid!, blockOwnerDeletion: false }] },
    ]);
    onPod('pod-finalizer', (o) => [addFinalizer(o, RELEASED)]);
    onPod('reserved-env', (o) => {
      const i = mainIndex(o);
      const entry = { name: 'BERTH_X', value: 'injected' };
      return [o.spec.containers![i]!.env ? { op: 'add', path: `/spec/containers/${i}/env/-`, value: entry } : { op: 'add', path: `/spec/containers/${i}/env`, value: [entry] }];
    });
    onPod('sidecar-mount', () => [
      { op: 'add', path: '/spec/volumes/-', value: { name: 'scratch', emptyDir: {} } },
      { op: 'add', path: '/spec/containers/-', value: sidecar({ volumeMounts: [{ name: 'scratch', mountPath: '/workspace/x' }] }) },
    ]);
    onPod('owned-label', () => [{ op: 'replace', path: `/metadata/labels/${pointer('app.kubernetes.io/component')}`, value: 'something-else' }]);
    onPod('nonce', () => [{ op: 'replace', path: `/metadata/annotations/${pointer('berth.dev/create-nonce')}`, value: 'f'.repeat(64) }]);
    onPvc('pvc-finalizer', (o) => [addFinalizer(o, RELEASED)]);
    onPvc('pvc-storage', () => [{ op: 'replace', path: '/spec/resources/requests/storage', value: '2Gi' }]);
    onPvc('pvc-stuck', (o) => [addFinalizer(o, STUCK)]);
    hook.on('unrelated-label', () => [{ op: 'add', path: `/metadata/labels/${pointer('example.com/team')}`, value: 'agents' }]);
    onPod('sidecar', () => [{ op: 'add', path: '/spec/containers/-', value: sidecar() }]);
    onPod('node-selector', (o) => [
      o.spec.nodeSelector
        ? { op: 'add', path: `/spec/nodeSelector/${pointer('kubernetes.io/hostname')}`, value: nodeName }
        : { op: 'add', path: '/spec/nodeSelector', value: { 'kubernetes.io/hostname': nodeName } },
    ]);
    releaser = releaseFinalizers(h.core, h.ns.name, RELEASED);
  });

  afterAll(async () => {
    try {
      await releaser?.stop();
      if (h) await dropFinalizers(h.core, h.ns.name, [RELEASED, STUCK]);
      await hook?.close();
      if (h) expect(await allObjects(h), 'nothing at all is left in the namespace (not even unlabelled)').toEqual([]);
    } finally {
      await h?.close();
      await repo?.remove();
    }
  });

  const launch = (executor: string) => launchFailing(h.controller, { repository: { url: repo.url }, executor, agent: 'demo', prompt: 'never runs', env: FAST_AGENT_ENV });

  /** A harmful mutation: the stage fails with AdmissionMutated naming `finding`, the launch goes no further and the rollback left nothing. */
  async function expectRejected(profile: string, stage: 'storage' | 'pod_ready', finding: string): Promise<void> {
    const v = await launch(profile);
    const kind = stage === 'storage' ? 'PVC' : 'Pod';
    expect(stageOf(v, stage), JSON.stringify(v.stages)).toMatchObject({ status: 'failed', reason: 'AdmissionMutated' });
    expect(stageOf(v, stage).message).toContain(`the API server admitted a changed ${kind}: `);
    expect(stageOf(v, stage).message).toContain(finding);
    expect(v.error).toMatchObject({ stage });
    expect(v.error?.message).toContain(finding);
    expect(v.error?.message, 'the rollback succeeded').not.toContain('rollback failed');
    expect(v.stages.map((s) => s.name)).toEqual(stage === 'storage' ? ['storage'] : ['storage', 'pod_ready']);
    expect(hook.patched(profile)[kind === 'Pod' ? 'Pod' : 'PersistentVolumeClaim'], 'the webhook really patched it').toBe(1);
    if (kind === 'PVC') expect(hook.patched(profile).Pod, 'no Pod was created after a rejected PVC').toBe(0);
    expect(await sessionLeftovers(h, v.id), 'the rollback deleted the Pod and the PVC').toEqual([]);
  }

  it('an owner reference on the Pod', () => expectRejected('owner-ref', 'pod_ready', 'admitted Pod added an owner reference'));

  it('a finalizer on the Pod (deleted once its owner releases it)', () => expectRejected('pod-finalizer', 'pod_ready', `admitted Pod added the finalizer "${RELEASED}"`));

  it('a reserved env key on the main container', () => expectRejected('reserved-env', 'pod_ready', 'admitted Pod added a reserved environment key "BERTH_X" to container "agent"'));

  it('a mount under /workspace in a sidecar', () =>
    expectRejected('sidecar-mount', 'pod_ready', 'admitted Pod mutated a reserved volume mount (container "injected" mounts "scratch" at /workspace/x)'));

  it('a changed ownership label', () => expectRejected('owned-label', 'pod_ready', 'admitted Pod ownership label "app.kubernetes.io/component" changed'));

  it('a changed create nonce', () => expectRejected('nonce', 'pod_ready', 'admitted Pod owned annotation "berth.dev/create-nonce" changed'));

  it('a finalizer other than pvc-protection on the PVC', () => expectRejected('pvc-finalizer', 'storage', `admitted PVC added the finalizer "${RELEASED}"`));

  it('a changed storage request on the PVC', () => expectRejected('pvc-storage', 'storage', 'admitted PVC mutated owned storage requirements (spec.resources.requests)'));

  it('a finalizer nobody removes: the session fails saying the rollback is incomplete, its row is kept, rm finishes later', async () => {
    const c = h.controller;
    const v = await launch('pvc-stuck');
    expect(stageOf(v, 'storage')).toMatchObject({ status: 'failed', reason: 'AdmissionMutated' });
    expect(v.error?.message).toContain(`admitted PVC added the finalizer "${STUCK}"`);
    expect(v.error?.message, 'the user is told the PVC could not be removed').toMatch(
      new RegExp(`\\(and rollback failed: delete pvc ${h.ns.name}/\\S+: still present \\(finalizers: ${STUCK.replace(/[./]/g, '\\$&')}\\) when the wait ended\\)$`),
    );
    expect((await c.get(v.id)).state, 'the row is kept (it still records the PVC UID)').toBe('failed');
    const pvcs = await h.core.listNamespacedPersistentVolumeClaim({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` });
    expect(pvcs.items).toHaveLength(1);
    expect(pvcs.items[0]!.metadata?.deletionTimestamp, 'Berth did delete it: the finalizer holds it').toBeDefined();
    await dropFinalizers(h.core, h.ns.name, [STUCK]);
    await c.remove(v.id);
    expect(await sessionLeftovers(h, v.id)).toEqual([]);
    await expect(c.get(v.id)).rejects.toThrow();
  });

  it('an unrelated label on the Pod and the PVC is accepted', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'unrelated-label', env: FAST_AGENT_ENV });
    expect(hook.patched('unrelated-label')).toEqual({ Pod: 1, PersistentVolumeClaim: 1 });
    const pods = await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` });
    expect(pods.items[0]?.metadata?.labels?.['example.com/team']).toBe('agents');
    await c.remove(v.id);
    expect(await sessionLeftovers(h, v.id)).toEqual([]);
  });

  it('an injected sidecar that touches nothing reserved is accepted', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'sidecar', env: FAST_AGENT_ENV });
    expect(hook.patched('sidecar').Pod).toBe(1);
    const pods = await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` });
    expect(pods.items[0]?.spec?.containers.map((x) => x.name)).toEqual(['agent', 'injected']);
    await c.remove(v.id);
    expect(await sessionLeftovers(h, v.id)).toEqual([]);
  });

  it('an extra node selector key is accepted', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'node-selector', env: FAST_AGENT_ENV });
    expect(hook.patched('node-selector').Pod).toBe(1);
    const pods = await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` });
    expect(pods.items[0]?.spec?.nodeSelector).toMatchObject({ 'kubernetes.io/hostname': nodeName, 'kubernetes.io/os': 'linux' });
    await c.remove(v.id);
    expect(await sessionLeftovers(h, v.id)).toEqual([]);
  });
});

/** Every Pod and PVC in the namespace, labelled or not. */
async function allObjects(h: BerthOnCluster): Promise<string[]> {
  const pods = await h.core.listNamespacedPod({ namespace: h.ns.name });
  const pvcs = await h.core.listNamespacedPersistentVolumeClaim({ namespace: h.ns.name });
  return [...pods.items.map((p) => `pod/${p.metadata?.name ?? ''}`), ...pvcs.items.map((p) => `pvc/${p.metadata?.name ?? ''}`)];
}

/** Removes the `finalizers` from every Pod and PVC in the namespace (JSON patch, guarded by a test of the list). */
async function dropFinalizers(core: CoreV1Api, namespace: string, finalizers: string[], onlyDeleting = false): Promise<void> {
  const patchFor = (m: V1ObjectMeta | undefined): PatchOp[] | null => {
    const have = m?.finalizers ?? [];
    if (!have.some((f) => finalizers.includes(f)) || (onlyDeleting && !m?.deletionTimestamp)) return null;
    return [
      { op: 'test', path: '/metadata/finalizers', value: have },
      { op: 'replace', path: '/metadata/finalizers', value: have.filter((f) => !finalizers.includes(f)) },
    ];
  };
  for (const p of (await core.listNamespacedPod({ namespace })).items) {
    const body = patchFor(p.metadata);
    if (body) await core.patchNamespacedPod({ namespace, name: p.metadata!.name!, body }).catch(() => undefined);
  }
  for (const p of (await core.listNamespacedPersistentVolumeClaim({ namespace })).items) {
    const body = patchFor(p.metadata);
    if (body) await core.patchNamespacedPersistentVolumeClaim({ namespace, name: p.metadata!.name!, body }).catch(() => undefined);
  }
}

/** The finalizer's "controller": releases `finalizer` from objects being deleted, every 250 ms. */
function releaseFinalizers(core: CoreV1Api, namespace: string, finalizer: string): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await dropFinalizers(core, namespace, [finalizer], true).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
