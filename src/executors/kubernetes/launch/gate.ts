/**
 * The scheduling gate of a Pod on a new managed claim, instead of waiting for the claim before the
 * create. Stage `storage` creates the Pod behind Berth's gate ({@link SCHEDULING_GATE}) while the
 * claim binds, so the create and its checkpoints overlap the binding; the scheduler leaves a gated
 * Pod alone, so it cannot be placed before the claim says Bound (the race claim-binding.ts
 * describes). Stage `pod_ready` lifts the gate first thing — the claim bound, or at once for a class
 * that binds on first use, or once the grace is over (the Pod then waits for the claim, as before)
 * — pinned to the Pod's UID and gate list (kube/gate.ts).
 *
 * Every create is checkpointed as before: a controller killed while the Pod is gated leaves a row
 * before `ready`, and recovery deletes the Pod by UID like any launch leftover; a Pod found still
 * gated by a revive was never started and is replaced (revive.ts). No Berth Pod stays gated past
 * its launch.
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { LaunchError } from '../../launch-kit/index.js';
import { SCHEDULING_GATE, STAGE } from '../constants.js';
import { isNotFound, KubeApiError } from '../kube/index.js';
import type { KubeLaunchState } from './context.js';

/** The `pod_ready` reason that says the gate was lifted. */
const GATE_LIFTED = 'SchedulingGateLifted';

/** A lift whose test failed (another controller lifted a gate of its own meanwhile) is tried again on the Pod read anew, this often in all. */
const LIFT_ATTEMPTS = 3;

/** True when the Pod still carries Berth's scheduling gate. */
export function berthGated(pod: V1Pod | undefined): boolean {
  return (pod?.spec?.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE);
}

/**
 * A Pod still behind scheduling gates as the monitor reports it — waiting to be scheduled, not a
 * failure (the scheduling budget still applies) — naming whose gates hold it; null otherwise.
 */
export function gatedWait(pod: V1Pod): { reason: string; message: string } | null {
  const gates = (pod.spec?.schedulingGates ?? []).map((g) => g.name);
  if (gates.length === 0) return null;
  const others = gates.filter((g) => g !== SCHEDULING_GATE);
  const message =
    others.length === 0
      ? 'the Pod waits for Berth to lift its scheduling gate'
      : `the Pod waits for its scheduling gates (${others.map((g) => `"${g}"`).join(', ')}) to be lifted by the controllers that set them`;
  return { reason: 'SchedulingGated', message };
}

function liftMessage(binding: KubeLaunchState['claimBinding']): string {
  if (binding === 'bound') return 'the workspace PVC is bound: the Pod may be scheduled';
  if (binding === 'first_consumer') return 'the storage class binds the workspace PVC once the Pod is scheduled: the Pod may be scheduled';
  return 'the workspace PVC is not bound yet: the Pod may be scheduled, and waits for it';
}

/**
 * Lifts Berth's gate of `pod` (this launch's, as created) and reports it under `pod_ready`; returns
 * the Pod as it is after. Never touches another Pod under the name: each attempt tests the UID.
 */
export async function liftGate(l: KubeLaunchState, pod: V1Pod): Promise<V1Pod> {
  const name = pod.metadata?.name ?? '';
  const uid = pod.metadata?.uid ?? '';
  let current = pod;
  for (let attempt = 1; berthGated(current); attempt++) {
    const gates = (current.spec?.schedulingGates ?? []).map((g) => g.name);
    try {
      const lifted = await l.kube.objects.liftSchedulingGate({ namespace: l.namespace, name, uid, gates }, SCHEDULING_GATE, l.signal);
      l.pod = lifted;
      l.report({ stage: STAGE.podReady, status: 'waiting', reason: GATE_LIFTED, message: liftMessage(l.claimBinding) });
      return lifted;
    } catch (err) {
      if (isNotFound(err)) throw gone();
      // 422: a test failed (another Pod under the name, or the gate list changed); read it again
      if (!(err instanceof KubeApiError && err.status === 422) || attempt >= LIFT_ATTEMPTS) throw err;
    }
    const again = await l.kube.objects.getPod(l.namespace, name, l.signal);
    if (again === undefined) throw gone();
    if (again.metadata?.uid !== uid) {
      throw new LaunchError(STAGE.podReady, 'PodReplaced', `the Pod was replaced by another object of the same name (UID ${again.metadata?.uid ?? '?'}) before its scheduling gate was lifted; it is left alone`);
    }
    current = again;
  }
  return current;
}

function gone(): LaunchError {
  return new LaunchError(STAGE.podReady, 'PodDeleted', 'the Pod was deleted before its scheduling gate was lifted');
}
