// The sweep of unrecorded objects (issue 18, item 12) on the real test cluster, as the executor's
// ServiceAccount (deploy/rbac.yaml): a Pod and a PVC carrying this Berth's labels and installation
// id that no session records are deleted once older than the minimum age (by the API server's
// clock), and not before; a Pod a session records is never touched; a Pod of another installation
// is reported (logged) and left alone. The delete is by UID: when the object is replaced under the
// same name between the sweep's list and its delete (the fault proxy holds the DELETE back), the
// replacement survives.
import { CoreV1Api, type KubeConfig, type V1PersistentVolumeClaim, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownershipLabels } from '../../src/executors/kubernetes/compose/index.js';
import { ANNOTATION } from '../../src/executors/kubernetes/constants.js';
import { defaultArtifactPaths, KubernetesExecutor } from '../../src/executors/kubernetes/index.js';
import type { Logger } from '../../src/shared/logger.js';
import { startApiProxy, type ApiProxy } from './support/api-proxy.js';
import { ROOT } from './support/berth.js';
import { clusterEnv, requireEnv } from './support/env.js';
import { connectionFor } from './support/executor-client.js';
import { loadKubeConfig } from './support/kube.js';
import { createTestNamespace, type TestNamespace } from './support/namespace.js';
import { restrictedPod } from './support/pods.js';
import { createExecutorServiceAccount, type ServiceAccountAccess } from './support/service-account.js';
import { sleep, waitFor, waitForPodGone } from './support/wait.js';

const env = clusterEnv();
const OURS = '0123456789abcdef0123456789abcdef';
const OTHER = 'fedcba9876543210fedcba9876543210';
/** A minimum age the test can wait out (production: the request timeout plus 30 s). */
const MIN_AGE_MS = 2_000;
const HOLD_MS = 6_000;

describe('kubernetes executor: the sweep of unrecorded objects', () => {
  let admin: KubeConfig;
  let core: CoreV1Api;
  let ns: TestNamespace;
  let sa: ServiceAccountAccess;
  let proxy: ApiProxy;
  let executor: KubernetesExecutor;
  const warnings: string[] = [];

  beforeAll(async () => {
    admin = loadKubeConfig(env.kubeconfig);
    core = admin.makeApiClient(CoreV1Api);
    ns = await createTestNamespace(admin, 'sweep', { podSecurity: 'restricted' });
    sa = await createExecutorServiceAccount(admin, ns.name);
    proxy = await startApiProxy(admin.getCurrentCluster()!.server, `${requireEnv('BERTH_CLUSTER_CACHE')}/pki`);
    const log: Logger = { debug: () => undefined, info: () => undefined, warn: (o, m) => warnings.push(`${m ?? ''} ${JSON.stringify(o)}`), error: () => undefined };
    executor = new KubernetesExecutor({
      name: 'cluster',
      connection: connectionFor(proxy.kubeconfigFor(sa.kubeconfigPath), ns.name),
      artifacts: defaultArtifactPaths(ROOT),
      logger: log,
      installationId: OURS,
    });
  });

  afterAll(async () => {
    await executor?.close();
    await proxy?.close();
    await sa?.cleanup();
    await ns?.cleanup();
  });

  /** Berth's labels for session `s` / instance `i`, and the installation annotation (none when undefined). */
  const metaOf = (name: string, s: string, installation: string | undefined) => ({
    name,
    labels: ownershipLabels({ instanceId: `${s}-inst`, sessionId: s, executor: 'cluster', profile: 'k8s' }),
    annotations: { [ANNOTATION.createNonce]: 'f'.repeat(64), ...(installation ? { [ANNOTATION.installation]: installation } : {}) },
  });

  async function berthPod(name: string, session: string, installation: string | undefined): Promise<V1Pod> {
    const pod = restrictedPod({ name, image: env.busyboxImage, command: ['sleep', '3600'], terminationGracePeriodSeconds: 0 });
    pod.metadata = metaOf(name, session, installation);
    return core.createNamespacedPod({ namespace: ns.name, body: pod });
  }

  async function berthPvc(name: string, session: string, installation: string | undefined): Promise<V1PersistentVolumeClaim> {
    const body: V1PersistentVolumeClaim = { metadata: metaOf(name, session, installation), spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } } };
    return core.createNamespacedPersistentVolumeClaim({ namespace: ns.name, body });
  }

  /** The object's UID now, or null when it is gone or being deleted. */
  async function liveUid(kind: 'Pod' | 'PVC', name: string): Promise<string | null> {
    try {
      const o = kind === 'Pod' ? await core.readNamespacedPod({ namespace: ns.name, name }) : await core.readNamespacedPersistentVolumeClaim({ namespace: ns.name, name });
      return o.metadata?.deletionTimestamp ? null : (o.metadata?.uid ?? null);
    } catch (err) {
      if ((err as { code?: number }).code === 404) return null;
      throw err;
    }
  }

  const recorded = (owner: { instanceId: string }) => owner.instanceId === 'live-inst';

  it('deletes only old unrecorded objects of this installation, keeps recorded ones, and reports foreign ones', async () => {
    const orphanPod = await berthPod('berth-orphan', 'orphan', OURS);
    const orphanPvc = await berthPvc('berth-orphan-workspace', 'orphan', OURS);
    const livePod = await berthPod('berth-live', 'live', OURS);
    const foreignPod = await berthPod('berth-foreign', 'foreign', OTHER);
    const oldPod = await berthPod('berth-unstamped', 'unstamped', undefined);

    // right after their creates, at the production minimum age: too young, nothing is deleted
    const early = await executor.sweepUnrecorded(recorded, { signal: AbortSignal.timeout(60_000) });
    expect(early.deleted).toEqual([]);
    expect(early.waiting, 'the two unrecorded objects of ours wait').toBe(2);
    expect(early.nextInMs).toBeGreaterThan(0);
    for (const [kind, name, uid] of [
      ['Pod', 'berth-orphan', orphanPod.metadata?.uid],
      ['PVC', 'berth-orphan-workspace', orphanPvc.metadata?.uid],
    ] as const) {
      expect(await liveUid(kind, name), `${kind} ${name} is still there`).toBe(uid);
    }

    await sleep(MIN_AGE_MS + 1_500);
    const swept = await executor.sweepUnrecorded(recorded, { minAgeMs: MIN_AGE_MS, signal: AbortSignal.timeout(120_000) });
    expect(swept.errors).toEqual([]);
    expect(swept.deleted).toEqual([`Pod ${ns.name}/berth-orphan (session orphan)`, `PVC ${ns.name}/berth-orphan-workspace (session orphan)`]);
    expect(await liveUid('Pod', 'berth-orphan')).toBeNull();
    expect(await liveUid('PVC', 'berth-orphan-workspace')).toBeNull();

    expect(await liveUid('Pod', 'berth-live'), 'a recorded Pod is never touched').toBe(livePod.metadata?.uid);
    expect(await liveUid('Pod', 'berth-foreign'), "another installation's Pod is left alone").toBe(foreignPod.metadata?.uid);
    expect(await liveUid('Pod', 'berth-unstamped'), 'a Pod without installation id is left alone').toBe(oldPod.metadata?.uid);
    expect(swept.foreign).toEqual([
      { object: `Pod ${ns.name}/berth-foreign (session foreign)`, why: 'it was created by another Berth (installation fedcba98…)' },
      { object: `Pod ${ns.name}/berth-unstamped (session unstamped)`, why: 'it carries no installation id (another Berth, or one from before installation ids)' },
    ]);
    const logged = warnings.filter((w) => w.includes("is not this Berth's"));
    expect(logged.filter((w) => w.includes('berth-foreign')), 'the foreign Pod is logged once, not at every sweep').toHaveLength(1);
    expect(warnings.some((w) => w.includes('deleted an object of this Berth') && w.includes(orphanPod.metadata!.uid!))).toBe(true);

    await core.deleteNamespacedPod({ namespace: ns.name, name: 'berth-live', gracePeriodSeconds: 0 });
    await core.deleteNamespacedPod({ namespace: ns.name, name: 'berth-foreign', gracePeriodSeconds: 0 });
    await core.deleteNamespacedPod({ namespace: ns.name, name: 'berth-unstamped', gracePeriodSeconds: 0 });
  });

  it('deletes by UID: an object replaced under the same name between the list and the delete survives', async () => {
    const first = await berthPod('berth-swap', 'swap', OURS);
    await sleep(MIN_AGE_MS + 1_500);
    const hold = proxy.add({ method: 'DELETE', path: new RegExp(`^/api/v1/namespaces/${ns.name}/pods/berth-swap(\\?|$)`), times: 1, action: { kind: 'delay', ms: HOLD_MS } });
    const sweep = executor.sweepUnrecorded(recorded, { minAgeMs: MIN_AGE_MS, signal: AbortSignal.timeout(120_000) });
    await waitFor('the sweep’s DELETE of berth-swap to reach the proxy', () => (hold.hits() === 1 ? true : undefined), { timeoutMs: 30_000 });
    // while that DELETE is held back: the Pod goes and another takes its name (same labels, same installation)
    await core.deleteNamespacedPod({ namespace: ns.name, name: 'berth-swap', gracePeriodSeconds: 0 });
    await waitForPodGone(admin, ns.name, 'berth-swap');
    const replacement = await berthPod('berth-swap', 'swap', OURS);
    expect(replacement.metadata?.uid).not.toBe(first.metadata?.uid);

    const report = await sweep;
    expect(report.deleted).toEqual([]);
    expect(report.errors).toEqual([]);
    expect(await liveUid('Pod', 'berth-swap'), 'the replacement is not deleted').toBe(replacement.metadata?.uid);
    proxy.clearRules();
    await core.deleteNamespacedPod({ namespace: ns.name, name: 'berth-swap', gracePeriodSeconds: 0 });
  });
});
