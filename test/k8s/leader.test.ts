// Leader election against a real coordination.k8s.io/v1 Lease: the Kubernetes LeasePort (MicroTime
// writes, conflicts as LeaseConflictError) and two electors in one process with short durations,
// run as a ServiceAccount whose Role grants only get/create/update on leases (the rule the chart
// needs). Takeover after a crash waits for the Lease to lapse; after a graceful release it does not.
import { performance } from 'node:perf_hooks';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaderElector } from '../../src/server/leader/elector.js';
import { kubeLeasePort } from '../../src/server/leader/kube-lease-port.js';
import { LeaseConflictError } from '../../src/server/leader/lease-port.js';
import type { LeaderTerm } from '../../src/server/leader/options.js';
import { createTestNamespace, expectApiFailure, loadKubeConfig } from './support/index.js';
import type { TestNamespace } from './support/index.js';

const LEASE_RULE = { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] };

/** A kubeconfig for a fresh ServiceAccount whose Role is exactly LEASE_RULE. */
async function leaseOnlyKubeConfig(admin: KubeConfig, namespace: string): Promise<KubeConfig> {
  const core = admin.makeApiClient(CoreV1Api);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const name = 'berth-leader';
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules: [LEASE_RULE] } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  });
  const token = (await core.createNamespacedServiceAccountToken({ name, namespace, body: { spec: { audiences: [], expirationSeconds: 3600 } } })).status?.token;
  if (!token) throw new Error('TokenRequest returned no token');
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('the admin kubeconfig has no current cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ ...cluster, name: 'test' }],
    users: [{ name, token }],
    contexts: [{ name: 'sa', cluster: 'test', user: name, namespace }],
    currentContext: 'sa',
  });
  return kc;
}

interface Node {
  id: string;
  elector: LeaderElector;
  terms: LeaderTerm[];
  /** Resolves at the next onStartedLeading. */
  nextTerm(): Promise<LeaderTerm>;
  /** Resolves once this elector has observed `holder` in the Lease. */
  sees(holder: string): Promise<void>;
}

function node(kc: KubeConfig, namespace: string, leaseName: string, id: string): Node {
  let waiters: ((t: LeaderTerm) => void)[] = [];
  let seen: { holder: string; resolve: () => void }[] = [];
  const terms: LeaderTerm[] = [];
  const elector = new LeaderElector({
    port: kubeLeasePort(kc, { namespace, name: leaseName }),
    identity: id,
    leaseName,
    namespace,
    leaseDurationMs: 3_000,
    renewDeadlineMs: 2_000,
    retryPeriodMs: 500,
    onStartedLeading: (term) => {
      terms.push(term);
      const w = waiters;
      waiters = [];
      for (const resolve of w) resolve(term);
    },
    onNewLeader: (holder) => {
      for (const s of seen.filter((w) => w.holder === holder)) s.resolve();
      seen = seen.filter((w) => w.holder !== holder);
    },
    onEvent: (e) => {
      if (e.type === 'error') console.log(`[${id}] leader election error (${e.op}):`, e.error);
    },
  });
  return {
    id,
    elector,
    terms,
    nextTerm: () => new Promise((resolve) => waiters.push(resolve)),
    sees: (holder) => (elector.leader === holder ? Promise.resolve() : new Promise((resolve) => seen.push({ holder, resolve }))),
  };
}

describe('leader election on a real Lease', () => {
  const admin = loadKubeConfig();
  let ns: TestNamespace;
  let kc: KubeConfig;
  const electors: LeaderElector[] = [];

  beforeAll(async () => {
    ns = await createTestNamespace(admin, 'leader');
    kc = await leaseOnlyKubeConfig(admin, ns.name);
  });

  afterAll(async () => {
    for (const e of electors) await e.stop();
    await ns?.cleanup();
  });

  it('the port writes MicroTimes the API server accepts and reports conflicts as LeaseConflictError', async () => {
    const port = kubeLeasePort(kc, { namespace: ns.name, name: 'port-check' });
    expect(await port.get()).toBeNull();
    const renewTime = new Date('2026-01-02T03:04:05.678Z');
    const record = { holderIdentity: 'x', leaseDurationSeconds: 7, acquireTime: renewTime, renewTime, leaseTransitions: 3 };
    const created = await port.create(record);
    expect(created).toMatchObject({ ...record, resourceVersion: expect.any(String) });
    expect(await port.get()).toEqual(created);

    const renewed = await port.replace({ ...created, renewTime: new Date('2026-01-02T03:04:06.001Z') });
    expect(renewed.renewTime).toEqual(new Date('2026-01-02T03:04:06.001Z'));
    expect(renewed.resourceVersion).not.toBe(created.resourceVersion);

    await expect(port.replace({ ...created, holderIdentity: 'y' })).rejects.toMatchObject({ name: 'LeaseConflictError', reason: 'conflict' });
    await expect(port.create(record)).rejects.toBeInstanceOf(LeaseConflictError);
    await expect(port.create(record)).rejects.toMatchObject({ reason: 'already-exists' });
    // The Role grants no delete: the rule is exactly what the elector uses.
    const admins = kubeLeasePort(admin, { namespace: ns.name, name: 'port-check' });
    expect((await admins.get())?.holderIdentity).toBe('x');
    await expectApiFailure(403, () => kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: ns.name }));
  });

  it('one of two electors leads; a crashed leader is replaced once the Lease lapses, a released one at once', async () => {
    const a = node(kc, ns.name, 'berth-controller', 'berth-0');
    const b = node(kc, ns.name, 'berth-controller', 'berth-1');
    electors.push(a.elector, b.elector);
    const port = kubeLeasePort(kc, { namespace: ns.name, name: 'berth-controller' });

    const first = Promise.race([a.nextTerm().then(() => a), b.nextTerm().then(() => b)]);
    a.elector.start();
    b.elector.start();
    const leader = await first;
    const standby = leader === a ? b : a;
    expect(leader.elector.isLeader).toBe(true);
    expect(standby.elector.isLeader).toBe(false);
    expect(leader.terms[0]!.generation).toBe(0);
    expect(await port.get()).toMatchObject({ holderIdentity: leader.id, leaseTransitions: 0, leaseDurationSeconds: 3 });

    // Crash: the leader's timers stop, the Lease is left as it was.
    const takeover = standby.nextTerm();
    const crashedAt = performance.now();
    await leader.elector.stop();
    expect(leader.terms[0]!.signal.aborted).toBe(true);
    const second = await takeover;
    const crashTakeoverMs = performance.now() - crashedAt;
    expect(second.generation).toBeGreaterThan(leader.terms[0]!.generation);
    expect(await port.get()).toMatchObject({ holderIdentity: standby.id, leaseTransitions: second.generation });

    // The crashed replica comes back: it stays a standby while the Lease is renewed.
    const back = leader.nextTerm();
    leader.elector.start();
    await leader.sees(standby.id);
    expect(leader.elector.isLeader).toBe(false);
    const releasedAt = performance.now();
    expect(await standby.elector.release()).toBe(true);
    expect(second.signal.aborted).toBe(true);
    const third = await back;
    const releaseTakeoverMs = performance.now() - releasedAt;
    expect(third.generation).toBeGreaterThan(second.generation);
    expect(await port.get()).toMatchObject({ holderIdentity: leader.id, leaseTransitions: third.generation });
    expect(standby.elector.isLeader).toBe(false);

    console.log(
      `leader election takeover (lease 3 s, renew deadline 2 s, retry 0.5 s): after a crash ${Math.round(crashTakeoverMs)} ms, ` +
        `after a graceful release ${Math.round(releaseTakeoverMs)} ms`,
    );
  });
});
