// Berth's Kubernetes Events (events.k8s.io/v1) on the real test cluster, as the executor's
// ServiceAccount of deploy/rbac.yaml: a launch that fails at pod_ready leaves a LaunchFailed Event
// about the session's Pod naming the stage and the reason — still listed after the rollback deleted
// the Pod, exactly as `kubectl get events` and `kubectl describe pod` read them (core v1, by the
// involved object's UID) — and an object the sweep deletes gets a Reaped Event. A Role without the
// events.k8s.io rule fails the same launch with the same reason (one warning, no Event), and
// `berth doctor` warns about it.
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, RbacAuthorizationV1Api, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreateInstanceRequest, RuntimeCheckpoint } from '../../src/executors/executor.js';
import { ownershipLabels } from '../../src/executors/kubernetes/compose/index.js';
import { encodeProfileSnapshot, parseKubernetesProfile } from '../../src/executors/kubernetes/config/index.js';
import { ANNOTATION, META } from '../../src/executors/kubernetes/constants.js';
import { defaultArtifactPaths, kubernetesDoctor, KubernetesExecutor, PROFILE_SETTING } from '../../src/executors/kubernetes/index.js';
import type { Logger } from '../../src/shared/logger.js';
import { clusterEnv } from './support/env.js';
import { connectionFor } from './support/executor-client.js';
import { loadKubeConfig } from './support/kube.js';
import { createTestNamespace, type TestNamespace } from './support/namespace.js';
import { restrictedPod } from './support/pods.js';
import { createExecutorServiceAccount, loadRbac, type ServiceAccountAccess } from './support/service-account.js';

const env = clusterEnv();
const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const INSTALLATION = '0123456789abcdef0123456789abcdef';
const MISSING_IMAGE = `${env.agentImage.replace(/:[^:/]+$/, '')}:no-such-tag`;

/** A warn-recording logger. */
function warnLog(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug: () => undefined, info: () => undefined, error: () => undefined, warn: (o, m) => warnings.push(`${m ?? ''} ${JSON.stringify(o)}`) };
}

function executorAs(sa: ServiceAccountAccess, namespace: string, log: Logger): KubernetesExecutor {
  return new KubernetesExecutor({ name: 'cluster', connection: connectionFor(sa.kubeconfigPath, namespace), artifacts: defaultArtifactPaths(ROOT), logger: log, installationId: INSTALLATION });
}

/** A fresh launch of an image that is not there and may not be pulled (fails pod_ready: ErrImageNeverPull). */
function failingRequest(checkpoints: RuntimeCheckpoint[]): CreateInstanceRequest {
  const id = `ev-${randomBytes(4).toString('hex')}`;
  const profile = parseKubernetesProfile(
    {
      platform: 'linux/amd64',
      mainContainer: 'agent',
      templateText: JSON.stringify({ spec: { containers: [{ name: 'agent', image: MISSING_IMAGE, imagePullPolicy: 'Never' }] } }),
      workspace: { mode: 'empty_dir' },
      setupScript: '',
      cleanupScript: '',
    },
    { path: 'profiles.events.kubernetes' },
  );
  return {
    identity: { instanceId: id, sessionId: `ses-${id}`, taskId: id, environmentId: id },
    repository: {},
    env: {},
    secretEnv: {},
    profile: { executor: 'cluster', profile: 'events', type: 'kubernetes', settings: { [PROFILE_SETTING]: encodeProfileSnapshot(profile) }, env: {} },
    onStage: () => undefined,
    checkpointRuntimeInventory: async (c) => {
      checkpoints.push(c);
    },
    releaseRuntimeInventory: async () => undefined,
  };
}

/** Launches and returns the error and the UID the Pod had (from its checkpoint). */
async function launchFailing(executor: KubernetesExecutor): Promise<{ err: Error & { stage?: string; reason?: string }; podUid: string }> {
  const checkpoints: RuntimeCheckpoint[] = [];
  const err = await executor.createInstance(failingRequest(checkpoints)).then(
    () => {
      throw new Error('the launch of a missing image succeeded');
    },
    (e: unknown) => e as Error & { stage?: string; reason?: string },
  );
  const podUid = checkpoints.find((c) => c.state === 'pod_created')?.metadata[META.podUid];
  if (!podUid) throw new Error(`no pod_created checkpoint: ${JSON.stringify(checkpoints.map((c) => c.state))}; launch error: ${err.message}`);
  return { err, podUid };
}

describe('kubernetes executor: Events about the session objects', () => {
  let admin: KubeConfig;
  let core: CoreV1Api;
  let ns: TestNamespace;
  let sa: ServiceAccountAccess;
  let noEvents: ServiceAccountAccess;

  /** The Events about the object with `uid`, as `kubectl describe` selects them. */
  const eventsAbout = async (uid: string): Promise<CoreV1Event[]> =>
    (await core.listNamespacedEvent({ namespace: ns.name, fieldSelector: `involvedObject.uid=${uid}` })).items;

  beforeAll(async () => {
    admin = loadKubeConfig(env.kubeconfig);
    core = admin.makeApiClient(CoreV1Api);
    ns = await createTestNamespace(admin, 'events', { podSecurity: 'restricted' });
    [sa, noEvents] = await Promise.all([createExecutorServiceAccount(admin, ns.name), createExecutorServiceAccount(admin, ns.name, { suffix: 'noevents' })]);
    // the same Role without the events.k8s.io rule (an installation that predates it)
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    const role = await rbac.readNamespacedRole({ name: noEvents.serviceAccount, namespace: ns.name });
    role.rules = (role.rules ?? []).filter((r) => !(r.apiGroups ?? []).includes('events.k8s.io'));
    await rbac.replaceNamespacedRole({ name: noEvents.serviceAccount, namespace: ns.name, body: role });
  });

  afterAll(async () => {
    await Promise.allSettled([sa?.cleanup(), noEvents?.cleanup()]);
    await ns?.cleanup();
  });

  it('grants exactly create on events.k8s.io events in deploy/rbac.yaml', async () => {
    const { role } = await loadRbac('x');
    expect((role.rules ?? []).filter((r) => (r.apiGroups ?? []).includes('events.k8s.io'))).toEqual([{ apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] }]);
  });

  it("lists a failed launch's LaunchFailed Event about its Pod, with the stage and the reason, after the rollback", async () => {
    const log = warnLog();
    const executor = executorAs(sa, ns.name, log);
    try {
      const { err, podUid } = await launchFailing(executor);
      expect([err.stage, err.reason]).toEqual(['pod_ready', 'ErrImageNeverPull']);
      const pods = (await core.listNamespacedPod({ namespace: ns.name })).items;
      expect(pods.filter((p) => p.metadata?.uid === podUid), 'the rollback deleted the Pod').toEqual([]);

      const events = (await eventsAbout(podUid)).filter((e) => e.reason === 'LaunchFailed');
      expect(events, 'one LaunchFailed Event about the Pod').toHaveLength(1);
      const e = events[0]!;
      expect(e).toMatchObject({ type: 'Warning', action: 'Launch', reportingComponent: 'berth.dev/controller', involvedObject: { kind: 'Pod', namespace: ns.name, uid: podUid } });
      expect(e.message).toMatch(/^Launch of session ses-ev-[0-9a-f]+ failed at stage pod_ready \(ErrImageNeverPull\): /);
      expect(e.message).toContain('no-such-tag');
      expect(e.eventTime, 'a MicroTime the API server accepted').toBeDefined();
      expect(log.warnings.filter((w) => w.includes('Kubernetes Events'))).toEqual([]);
    } finally {
      await executor.close();
    }
  });

  it('writes a Reaped Event on an unrecorded object the sweep deletes', async () => {
    const executor = executorAs(sa, ns.name, warnLog());
    try {
      const pod = restrictedPod({ name: 'berth-unrecorded', image: env.busyboxImage, command: ['sleep', '3600'], terminationGracePeriodSeconds: 0 });
      pod.metadata = {
        name: 'berth-unrecorded',
        labels: ownershipLabels({ instanceId: 'lost-inst', sessionId: 'lost', executor: 'cluster', profile: 'events' }),
        annotations: { [ANNOTATION.createNonce]: 'f'.repeat(64), [ANNOTATION.installation]: INSTALLATION },
      };
      const created = await core.createNamespacedPod({ namespace: ns.name, body: pod });
      const report = await executor.sweepUnrecorded(() => false, { minAgeMs: 0 });
      expect(report.deleted).toEqual([`Pod ${ns.name}/berth-unrecorded (session lost)`]);

      const reaped = (await eventsAbout(created.metadata!.uid!)).filter((e) => e.reason === 'Reaped');
      expect(reaped).toHaveLength(1);
      expect(reaped[0]).toMatchObject({ type: 'Normal', action: 'Delete', involvedObject: { kind: 'Pod', name: 'berth-unrecorded' } });
      expect(reaped[0]?.message).toMatch(/^Berth deletes this Pod of session lost: no session of this Berth records it/);
    } finally {
      await executor.close();
    }
  });

  it('fails the same way without the rule, warning once, and doctor warns about it', async () => {
    const log = warnLog();
    const executor = executorAs(noEvents, ns.name, log);
    try {
      for (let i = 0; i < 2; i++) {
        const { err, podUid } = await launchFailing(executor);
        expect([err.stage, err.reason]).toEqual(['pod_ready', 'ErrImageNeverPull']);
        expect((await eventsAbout(podUid)).filter((e) => e.reason === 'LaunchFailed')).toEqual([]);
      }
      const warnings = log.warnings.filter((w) => w.includes('cannot write Kubernetes Events'));
      expect(warnings, 'one warning for both launches').toHaveLength(1);
      expect(warnings[0]).toContain('add "create" on "events" in API group "events.k8s.io" to the Role');
    } finally {
      await executor.close();
    }

    const target = (account: ServiceAccountAccess) => ({ executor: 'cluster', connection: connectionFor(account.kubeconfigPath, ns.name), profiles: [] });
    const without = (await kubernetesDoctor(target(noEvents))).filter((c) => c.name === 'cluster: events');
    expect(without).toHaveLength(1);
    expect(without[0]).toMatchObject({ ok: true, warn: true });
    expect(without[0]?.fix).toContain('verbs ["create"]');
    expect((await kubernetesDoctor(target(sa))).map((c) => c.name), 'no events line when the rule is there').not.toContain('cluster: events');
  });
});
