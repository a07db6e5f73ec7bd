import { describe, expect, it } from 'vitest';
import { META } from '../constants.js';
import { apiError, type FakeKind, type ObjectCall } from '../testing/fake-kube.js';
import { KubeHarness, NAMESPACE, POD_NAME, PVC_NAME, rejection, testProfile } from '../testing/harness.js';

const FRESH_CHECKPOINTS = ['pvc_creating', 'pvc_created', 'pvc_admitted', 'pod_creating', 'pod_created', 'pod_admitted', 'bootstrapped', 'agentctl_connected'];
const STAGES = ['storage', 'pod_ready', 'bootstrap', 'agentctl_connect'];

/** The deletes sent, as `Kind uid`. */
function deletes(h: KubeHarness): string[] {
  return h.objects.calls.filter((c) => c.op === 'deletePod' || c.op === 'deletePVC').map((c) => `${c.op.slice(6)} ${c.preconditions?.uid ?? '?'}`);
}

/** The objects created, as `Kind uid`, Pod first (the order a rollback deletes them in). */
function created(h: KubeHarness): string[] {
  const made = h.objects.calls.filter((c): c is ObjectCall & { created: string } => c.created !== undefined);
  return made.map((c) => `${c.op.slice(6)} ${c.created}`).sort((a, b) => (a.startsWith('Pod') ? -1 : b.startsWith('Pod') ? 1 : 0));
}

/** Lets closes that are not awaited (forwards of a connect cut short) run. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

function failed(h: KubeHarness): string[] {
  return h.stageTrail.filter((s) => s.endsWith(':failed'));
}

describe('fresh launch: stages and checkpoints', () => {
  it('runs storage → pod_ready → bootstrap → agentctl_connect, checkpointing each side effect in order', async () => {
    const h = new KubeHarness();
    const instance = await h.launch();

    expect(h.stageTrail).toEqual(STAGES.flatMap((s) => [`${s}:running`, `${s}:succeeded`]));
    expect(h.states).toEqual(FRESH_CHECKPOINTS);
    // the claim's UID is recorded the moment it exists, the Pod's likewise, before anything else can fail
    const pvc = h.objects.find('PVC', NAMESPACE, PVC_NAME);
    const pod = h.objects.find('Pod', NAMESPACE, POD_NAME);
    const at = (state: string): Readonly<Record<string, string>> => h.recorded.checkpoints.find((c) => c.state === state)?.metadata ?? {};
    expect(at('pvc_created')[META.pvcUid]).toBe(pvc?.metadata?.uid);
    expect(at('pod_created')[META.podUid]).toBe(pod?.metadata?.uid);
    expect(at('pod_creating')[META.podUid]).toBeUndefined();
    expect(instance.metadata[META.podUid]).toBe(pod?.metadata?.uid);
    expect(instance.metadata[META.pvcUid]).toBe(pvc?.metadata?.uid);
    expect(instance.revived).toBe(true);

    expect(h.objects.calls.filter((c) => c.op.startsWith('create')).map((c) => c.op)).toEqual(['createPVC', 'createPod']);
    expect(deletes(h)).toEqual([]);
    expect(h.recorded.releases).toBe(0);
    expect(h.exec.calls.map((c) => c.kind)).toEqual(['probe', 'bootstrap']);
    // the nonce the bootstrap delivered is the one traded, and the one handed back to record
    expect(h.agentctl.handshakes).toEqual([{ podUid: pod?.metadata?.uid, nonce: instance.secrets.bootstrapNonce, accepted: true }]);
    // agentctl serves the instance API on its control port: one forward carries both
    expect(h.agentctl.forwards.map((f) => f.target.port)).toEqual([8765]);
    await instance.close();
    expect(h.agentctl.openForwards).toBe(0);
  });

  it('opens a second forward, to the instance port, for an agentctl that does not serve the instance API on its control port', async () => {
    const h = new KubeHarness();
    h.agentctl.features = [];
    const instance = await h.launch();
    expect(h.agentctl.forwards.map((f) => f.target.port)).toEqual([8765, 41001]);
    expect(h.agentctl.requests.filter((r) => r === 'GET /health').length).toBeGreaterThanOrEqual(2);
    await instance.close();
    expect(h.agentctl.openForwards).toBe(0);
  });

  it('creates no storage object for an emptyDir workspace, and only reads an existing claim', async () => {
    const empty = new KubeHarness({ profile: testProfile({ mode: 'empty_dir' }) });
    await empty.launch();
    expect(empty.states).toEqual(FRESH_CHECKPOINTS.slice(3));
    expect(empty.objects.calls.some((c) => c.op.endsWith('PVC'))).toBe(false);

    const existing = new KubeHarness({ profile: testProfile({ mode: 'existing_claim', claimName: 'shared' }) });
    const claim = existing.objects.put('PVC', { metadata: { name: 'shared', namespace: NAMESPACE }, status: { phase: 'Bound' } });
    const instance = await existing.launch();
    expect(existing.objects.calls.filter((c) => c.op.endsWith('PVC')).map((c) => c.op)).toEqual(['getPVC']);
    expect(instance.metadata[META.pvcUid]).toBe(claim.metadata?.uid);
    expect(instance.metadata[META.pvcCreated]).toBe('false');
  });

  it('starts a later launch of a probed image with the bootstrap as its first exec, and probes again after a failed one', async () => {
    const h = new KubeHarness();
    await h.launch();
    await h.executor.stopInstance(h.stopTarget(h.recorded.checkpoints.at(-1)?.metadata ?? {}), { destroy: true, reason: 'test' });
    h.resetRecords();
    await h.launch();
    expect(h.exec.calls.map((c) => c.kind)).toEqual(['bootstrap']);

    await h.executor.stopInstance(h.stopTarget(h.recorded.checkpoints.at(-1)?.metadata ?? {}), { destroy: true, reason: 'test' });
    h.agentctl.hook = (r) => (r.path === '/auth/handshake' ? { status: 500 } : undefined);
    await rejection(h.launch());
    h.agentctl.hook = () => undefined;
    h.resetRecords();
    await h.launch();
    // a failure in agentctl_connect keeps the probe (only pod_ready and bootstrap failures forget it)
    expect(h.exec.calls.map((c) => c.kind)).toEqual(['bootstrap']);
  });
});

interface FailureCase {
  name: string;
  stage: string;
  reason?: string;
  /** What the launch had created when it failed (and so what its rollback deletes, Pod first). */
  created: FakeKind[];
  arrange: (h: KubeHarness) => void;
}

const FAILURES: FailureCase[] = [
  { name: 'the PVC create is refused', stage: 'storage', reason: 'Forbidden', created: [], arrange: (h) => h.objects.failOn('createPVC', apiError(403, 'Forbidden', 'persistentvolumeclaims is forbidden')) },
  { name: 'the Pod create is refused', stage: 'pod_ready', reason: 'Forbidden', created: ['PVC'], arrange: (h) => h.objects.failOn('createPod', apiError(403, 'Forbidden', 'pods is forbidden')) },
  {
    name: 'the image cannot be pulled',
    stage: 'pod_ready',
    reason: 'ErrImagePull',
    created: ['Pod', 'PVC'],
    arrange: (h) => {
      h.objects.onPodCreated = () =>
        h.objects.update('Pod', NAMESPACE, POD_NAME, (p) => {
          p.spec = { containers: p.spec?.containers ?? [], nodeName: 'node-1' };
          p.status = { phase: 'Pending', containerStatuses: [{ name: 'agent', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull', message: 'manifest unknown' } } }] };
        });
    },
  },
  { name: "the created Pod's checkpoint cannot be written", stage: 'pod_ready', created: ['Pod', 'PVC'], arrange: (h) => (h.failCheckpoint = (s) => (s === 'pod_created' ? new Error('inventory down') : undefined)) },
  { name: 'prepare.sh fails', stage: 'bootstrap', reason: 'PrepareFailed', created: ['Pod', 'PVC'], arrange: (h) => (h.exec.handle = (c) => (c.kind === 'bootstrap' ? { exitCode: 75, stderr: 'fatal: repository not found' } : undefined)) },
  { name: 'the handshake fails', stage: 'agentctl_connect', created: ['Pod', 'PVC'], arrange: (h) => (h.agentctl.hook = (r) => (r.path === '/auth/handshake' ? { status: 500 } : undefined)) },
];

describe('fresh launch: every stage failure ends in exactly one rollback', () => {
  it.each(FAILURES)('$stage: $name', async (c) => {
    const h = new KubeHarness();
    c.arrange(h);
    const err = await rejection(h.launch());
    await settle();

    expect(err.name).toBe('LaunchError');
    expect(err.stage).toBe(c.stage);
    if (c.reason) expect(err.reason).toBe(c.reason);
    expect(failed(h)).toEqual([`${c.stage}:failed`]);
    expect(created(h).map((o) => o.split(' ')[0])).toEqual(c.created);
    // exactly the objects this launch created, each once, by its UID (and a resourceVersion read just before)
    expect(deletes(h)).toEqual(created(h));
    for (const d of h.objects.calls.filter((x) => x.op.startsWith('delete'))) expect(d.preconditions?.resourceVersion).toBeDefined();
    expect(err.rollbackErrors).toEqual([]);
    expect(h.recorded.releases).toBe(1);
    expect(h.objects.find('Pod', NAMESPACE, POD_NAME)).toBeUndefined();
    expect(h.objects.find('PVC', NAMESPACE, PVC_NAME)).toBeUndefined();
    expect(h.agentctl.openForwards).toBe(0);
  });

  it('deletes the UIDs the checkpoints recorded', async () => {
    const h = new KubeHarness();
    FAILURES[4]?.arrange(h);
    await rejection(h.launch());
    const last = h.recorded.checkpoints.at(-1)?.metadata ?? {};
    expect(deletes(h)).toEqual([`Pod ${last[META.podUid]}`, `PVC ${last[META.pvcUid]}`]);
  });
});

describe('fresh launch: a rollback that fails keeps the row', () => {
  it('surfaces a failed delete with the launch error and does not release the row', async () => {
    const h = new KubeHarness();
    h.exec.handle = (c) => (c.kind === 'bootstrap' ? { exitCode: 75 } : undefined);
    h.objects.failOn('deletePod', apiError(500, 'InternalError', 'etcd timeout'));
    const err = await rejection(h.launch());

    expect(err.stage).toBe('bootstrap');
    expect(err.reason).toBe('PrepareFailed');
    expect(err.rollbackErrors).toHaveLength(1);
    expect(err.message).toMatch(/rollback failed: .*etcd timeout/);
    expect(h.recorded.releases).toBe(0);
    // the row keeps the Pod's UID, and the Pod is still there to be deleted by it later
    const pod = h.objects.find('Pod', NAMESPACE, POD_NAME);
    expect(h.recorded.checkpoints.at(-1)?.metadata[META.podUid]).toBe(pod?.metadata?.uid);
    expect(failed(h)).toEqual(['bootstrap:failed']);
  });

  it('surfaces a failed release of the row', async () => {
    const h = new KubeHarness();
    h.objects.failOn('createPod', apiError(403, 'Forbidden', 'pods is forbidden'));
    h.failRelease = new Error('database is locked');
    const err = await rejection(h.launch());
    expect(err.stage).toBe('pod_ready');
    expect(err.rollbackErrors).toEqual([h.failRelease]);
    expect(deletes(h)).toEqual(created(h));
  });
});

describe('fresh launch: foreign objects are never deleted', () => {
  it('fails on a same-name Pod it did not create, and its rollback leaves that Pod alone', async () => {
    const h = new KubeHarness();
    const foreign = h.objects.put('Pod', { metadata: { name: POD_NAME, namespace: NAMESPACE, labels: { team: 'other' } } });
    const err = await rejection(h.launch());

    expect(err.stage).toBe('pod_ready');
    expect(err.reason).toBe('AlreadyExists');
    expect(h.objects.callsOf('deletePod')).toEqual([]);
    expect(h.objects.find('Pod', NAMESPACE, POD_NAME)?.metadata?.uid).toBe(foreign.metadata?.uid);
    expect(deletes(h)).toEqual(created(h)); // its own claim only
    expect(h.recorded.releases).toBe(1);
  });

  it('leaves a Pod that took the name of its deleted Pod alone', async () => {
    const h = new KubeHarness();
    h.objects.onPodCreated = () => {
      h.objects.remove('Pod', NAMESPACE, POD_NAME);
      h.objects.put('Pod', { metadata: { name: POD_NAME, namespace: NAMESPACE } });
    };
    const err = await rejection(h.launch());

    expect(err.stage).toBe('pod_ready');
    expect(['PodDeleted', 'PodReplaced']).toContain(err.reason);
    expect(h.objects.callsOf('deletePod')).toEqual([]);
    expect(h.objects.find('Pod', NAMESPACE, POD_NAME)).toBeDefined();
    expect(h.objects.find('PVC', NAMESPACE, PVC_NAME)).toBeUndefined();
    expect(h.recorded.releases).toBe(1);
  });
});
