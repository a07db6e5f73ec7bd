import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ExecutorInstance, RuntimeCheckpoint } from '../../executor.js';
import { META, SCHEDULING_GATE } from '../constants.js';
import { parseKubernetesProfile } from '../config/index.js';
import { apiError } from '../testing/fake-kube.js';
import { KubeHarness, NAMESPACE, POD_NAME, PVC_NAME, rejection } from '../testing/harness.js';

const FRESH_CHECKPOINTS = ['pvc_creating', 'pvc_created', 'pvc_admitted', 'pod_creating', 'pod_created', 'pod_admitted', 'bootstrapped', 'agentctl_connected'];
const STAGES = ['storage', 'pod_ready', 'bootstrap', 'agentctl_connect'].flatMap((s) => [`${s}:running`, `${s}:succeeded`]);

/**
 * A harness whose new claim does not bind by itself (the test binds it), and which tells when the
 * launch's Pod was created (the create answered).
 */
function pendingClaim(h = new KubeHarness()): { h: KubeHarness; podCreated: Promise<V1Pod> } {
  h.objects.onPvcCreated = (pvc) => {
    pvc.status = { phase: 'Pending' };
  };
  let created!: (pod: V1Pod) => void;
  const podCreated = new Promise<V1Pod>((resolve) => (created = resolve));
  const create = h.objects.createPod.bind(h.objects);
  h.objects.createPod = async (namespace, pod, opts) => {
    const made = await create(namespace, pod, opts);
    created(made);
    return made;
  };
  return { h, podCreated };
}

/** The PV controller binds the claim. */
function bind(h: KubeHarness): void {
  h.objects.update('PVC', NAMESPACE, PVC_NAME, (p) => {
    p.status = { phase: 'Bound' };
    if (p.spec) Object.assign(p.spec, { volumeName: 'pv-1' });
  });
}

function waits(h: KubeHarness, stage: string): (string | undefined)[] {
  return h.recorded.stages.filter((s) => s.stage === stage && s.status === 'waiting').map((s) => s.reason);
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the scheduling gate of a Pod on a new managed claim', () => {
  it('creates the Pod behind the gate while the claim binds, and lifts the gate, pinned to its UID, once the claim is Bound', async () => {
    const { h, podCreated } = pendingClaim();
    const launching = h.launch();
    const pod = await podCreated;

    expect(pod.spec?.schedulingGates).toEqual([{ name: SCHEDULING_GATE }]);
    expect(h.objects.find('PVC', NAMESPACE, PVC_NAME)?.status?.phase).toBe('Pending');
    expect(h.objects.callsOf('liftGatePod')).toEqual([]);
    bind(h);
    const instance = await launching;

    expect(waits(h, 'storage')).toEqual(['ClaimBound']);
    expect(waits(h, 'pod_ready')[0]).toBe('SchedulingGateLifted');
    expect(h.objects.callsOf('liftGatePod')).toEqual([expect.objectContaining({ name: POD_NAME, preconditions: { uid: pod.metadata?.uid }, gate: SCHEDULING_GATE, gates: [SCHEDULING_GATE] })]);
    expect(h.objects.find('Pod', NAMESPACE, POD_NAME)?.spec?.schedulingGates).toBeUndefined();
    // the same checkpoints in the same order; the stages as before
    expect(h.states).toEqual(FRESH_CHECKPOINTS);
    expect(h.stageTrail).toEqual(STAGES);
    expect(instance.metadata[META.podUid]).toBe(pod.metadata?.uid);
    await instance.close();
  });

  it('creates the Pod without a gate when the claim is bound at once (nothing to wait for)', async () => {
    const h = new KubeHarness();
    const instance = await h.launch();
    expect(h.objects.callsOf('liftGatePod')).toEqual([]);
    expect(waits(h, 'storage')).toEqual(['ClaimBound']);
    expect(h.stageTrail).toEqual(STAGES);
    await instance.close();
  });

  it('lifts the gate at once for a class that binds on first use; the claim binds once the Pod is scheduled', async () => {
    const { h, podCreated } = pendingClaim();
    h.objects.onPodCreated = () => {
      bind(h);
      h.objects.startPod(NAMESPACE, POD_NAME);
    };
    const launching = h.launch();
    await podCreated;
    const pvcUid = h.objects.find('PVC', NAMESPACE, PVC_NAME)?.metadata?.uid ?? '';
    h.objects.emitEvent(NAMESPACE, pvcUid, { reason: 'WaitForFirstConsumer', type: 'Normal', message: 'waiting for first consumer to be created before binding' });
    const instance = await launching;

    expect(waits(h, 'storage')).toEqual(['WaitForFirstConsumer']);
    expect(h.recorded.stages.find((s) => s.reason === 'WaitForFirstConsumer')?.message).toMatch(/lifting the scheduling gate/);
    expect(h.objects.callsOf('liftGatePod')).toHaveLength(1);
    expect(h.objects.find('PVC', NAMESPACE, PVC_NAME)?.status?.phase).toBe('Bound');
    await instance.close();
  });

  it('lifts the gate when the grace is over; the Pod then waits for the claim', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
    const { h, podCreated } = pendingClaim();
    const launching = h.launch();
    await podCreated;
    expect(h.objects.callsOf('liftGatePod')).toEqual([]);
    await vi.advanceTimersByTimeAsync(5_000);
    const instance = await launching;

    expect(waits(h, 'storage')).toEqual(['ClaimPending']);
    expect(h.objects.callsOf('liftGatePod')).toHaveLength(1);
    expect(waits(h, 'pod_ready')[0]).toBe('SchedulingGateLifted');
    await instance.close();
  });

  it("fails pod_ready with the create's error when the gated Pod's create is refused, ending the wait for the claim; the claim is rolled back", async () => {
    const { h } = pendingClaim();
    h.objects.failOn('createPod', apiError(403, 'Forbidden', 'pods is forbidden'));
    const err = await rejection(h.launch());

    expect([err.stage, err.reason]).toEqual(['pod_ready', 'Forbidden']);
    expect(h.stageTrail).toEqual(['storage:running', 'storage:succeeded', 'pod_ready:running', 'pod_ready:failed']);
    expect(waits(h, 'storage')).toEqual([]);
    expect(h.objects.callsOf('deletePod')).toEqual([]);
    expect(h.objects.callsOf('deletePVC')).toHaveLength(1);
    expect(h.objects.find('PVC', NAMESPACE, PVC_NAME)).toBeUndefined();
  });

  it('never lifts the gate of another Pod that took the name: PodReplaced, and that Pod is left alone', async () => {
    const { h, podCreated } = pendingClaim();
    const launching = h.launch();
    const ours = await podCreated;
    h.objects.remove('Pod', NAMESPACE, POD_NAME);
    const foreign = h.objects.put('Pod', { metadata: { name: POD_NAME, namespace: NAMESPACE }, spec: { containers: [{ name: 'x' }], schedulingGates: [{ name: SCHEDULING_GATE }] } });
    bind(h);
    const err = await rejection(launching);

    expect([err.stage, err.reason]).toEqual(['pod_ready', 'PodReplaced']);
    expect(h.objects.callsOf('liftGatePod').map((c) => c.preconditions?.uid)).toEqual([ours.metadata?.uid]);
    const left = h.objects.find('Pod', NAMESPACE, POD_NAME);
    expect(left?.metadata?.uid).toBe(foreign.metadata?.uid);
    expect(left?.spec?.schedulingGates).toEqual([{ name: SCHEDULING_GATE }]);
  });

  it("reports a Pod held by another controller's gate as SchedulingGated (waiting, not a failure) until that gate is lifted", async () => {
    const templateText = ['spec:', '  schedulingGates:', '    - name: example.com/quota', '  containers:', '    - name: agent', '      image: registry.example/agent:1.2', ''].join('\n');
    const profile = parseKubernetesProfile(
      { platform: 'linux/amd64', mainContainer: 'agent', templateText, workspace: { mode: 'managed_pvc', size: '1Gi', accessModes: ['ReadWriteOnce'] }, setupScript: '', cleanupScript: '' },
      { path: 'profiles.k8s.kubernetes' },
    );
    const { h, podCreated } = pendingClaim(new KubeHarness({ profile }));
    const launching = h.launch();
    const pod = await podCreated;
    expect(pod.spec?.schedulingGates).toEqual([{ name: 'example.com/quota' }, { name: SCHEDULING_GATE }]);
    bind(h);
    await vi.waitFor(() => expect(waits(h, 'pod_ready')).toContain('SchedulingGated'));
    expect(h.objects.find('Pod', NAMESPACE, POD_NAME)?.spec?.schedulingGates).toEqual([{ name: 'example.com/quota' }]);
    expect(h.recorded.stages.find((s) => s.reason === 'SchedulingGated')?.message).toMatch(/"example\.com\/quota"/);
    // the quota controller lets it go
    await h.objects.liftSchedulingGate({ namespace: NAMESPACE, name: POD_NAME, uid: pod.metadata?.uid ?? '', gates: ['example.com/quota'] }, 'example.com/quota');
    const instance = await launching;
    expect(h.stageTrail).toEqual(STAGES);
    await instance.close();
  });
});

describe('a gated Pod left by a controller killed mid-launch', () => {
  /**
   * Launches with a claim that does not bind and a checkpoint at `dieAt` that never returns (the
   * controller is killed while writing it); resolves with the rows written before, once it hangs.
   */
  async function killedAt(h: KubeHarness, dieAt: string): Promise<RuntimeCheckpoint[]> {
    const rows: RuntimeCheckpoint[] = [];
    let died!: () => void;
    const dead = new Promise<void>((resolve) => (died = resolve));
    const request = h.request();
    void h.executor.createInstance({
      ...request,
      checkpointRuntimeInventory: async (c) => {
        if (c.state === dieAt) {
          died();
          await new Promise<never>(() => undefined);
        }
        rows.push(c);
      },
    });
    await dead;
    return rows;
  }

  it.each([
    ['pod_created', 'pod_creating'],
    ['pod_admitted', 'pod_created'],
  ])('killed at %s (the row says %s): recovery deletes the gated Pod and the claim by UID', async (dieAt, rowState) => {
    const { h } = pendingClaim();
    const rows = await killedAt(h, dieAt);
    const row = rows[rows.length - 1];
    expect(row?.state).toBe(rowState);
    const pod = h.objects.find('Pod', NAMESPACE, POD_NAME);
    expect(pod?.spec?.schedulingGates).toEqual([{ name: SCHEDULING_GATE }]);

    // a new controller on the same cluster recovers the row
    const next = new KubeHarness({ objects: h.objects });
    await next.executor.stopInstance(next.stopTarget(row?.metadata ?? {}), { destroy: true, reason: 'recover_provisional' });
    expect(h.objects.callsOf('deletePod').map((c) => c.preconditions?.uid)).toEqual([pod?.metadata?.uid]);
    expect(h.objects.find('Pod', NAMESPACE, POD_NAME)).toBeUndefined();
    expect(h.objects.find('PVC', NAMESPACE, PVC_NAME)).toBeUndefined();
  });

  it('a recorded Pod found still gated on a resume never ran: it is replaced (SchedulingGated), never waited for', async () => {
    const h = new KubeHarness();
    const launched: ExecutorInstance = await h.launch();
    await launched.close();
    const oldUid = launched.metadata[META.podUid];
    h.objects.update('Pod', NAMESPACE, POD_NAME, (p) => {
      p.spec = { ...p.spec, containers: p.spec?.containers ?? [], schedulingGates: [{ name: SCHEDULING_GATE }] };
      delete p.spec.nodeName;
      p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] };
    });
    h.resetRecords();
    const instance = await h.executor.createInstance(h.request({ previous: { metadata: { ...launched.metadata }, secrets: launched.secrets } }));

    expect(instance.replaced?.reason).toBe('SchedulingGated');
    expect(h.objects.callsOf('deletePod').map((c) => c.preconditions?.uid)).toEqual([oldUid]);
    const pod = h.objects.find('Pod', NAMESPACE, POD_NAME);
    expect(pod?.metadata?.uid).not.toBe(oldUid);
    expect(pod?.spec?.schedulingGates).toBeUndefined();
    await instance.close();
  });
});
