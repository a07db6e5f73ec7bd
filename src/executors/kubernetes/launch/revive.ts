/**
 * A recorded instance brought back: reconnect to its running Pod (recorded token, or a fresh nonce
 * written into the Pod when agentctl restarted), or — after a stop, or when the Pod is gone — a new
 * Pod under the recorded name with a fresh nonce, built from the recorded profile snapshot on the
 * same claim, bootstrapped without a clone (the workspace is as the agent left it); a replacement
 * is written as Kubernetes Events on the old Pod (while it exists) and on the new one. A Pod still
 * behind Berth's scheduling gate never ran (gate.ts): it is replaced like a failed one. Every nonce
 * is used once, by one agentctl, and the one traded last is what gets recorded. A same-name Pod
 * with another UID is never touched.
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { ExecutorInstance, InstanceSecrets } from '../../executor.js';
import { INIT_STAGE, LaunchError, REASON, Rollback } from '../../launch-kit/index.js';
import { META, STAGE } from '../constants.js';
import { ownershipLabelProblems, ownershipLabels } from '../compose/index.js';
import { deleteAll, deleteEach } from '../cleanup.js';
import { launchSecrets, reapedPendingPodEvent, replacedEvent, replacingEvent } from '../event-recorder.js';
import type { EventObjectRef } from '../kube/index.js';
import { pendingTarget } from '../pending.js';
import { POD_AGENTCTL } from '../artifacts.js';
import { reconnect } from './connect.js';
import type { KubeLaunchState } from './context.js';
import { berthGated } from './gate.js';
import { buildInstance, instanceEnv } from './instance.js';
import { deliverFreshNonce } from './nonce-delivery.js';
import { createNonce } from '../compose/index.js';
import { PodStart } from './start-pod.js';

const RECONNECT_TIMEOUT_MS = 15_000;

interface ReviveOptions {
  secrets: InstanceSecrets;
  /**
   * A refresh of a ready session: a Pod that is gone or failed is replaced as on a resume, and the
   * reason (PodDeleted, PodEvicted …) is reported first.
   */
  explainReplacement: boolean;
  /** What the Pod watch saw when it started this refresh (see {@link whyGone}). */
  cause?: { reason: string; message: string };
}

export async function reviveLaunch(l: KubeLaunchState, opts: ReviveOptions): Promise<ExecutorInstance> {
  await removePendingPod(l);
  const pod = await l.kube.objects.getPod(l.namespace, l.meta.podName, l.signal);
  if (pod !== undefined && pod.metadata?.uid !== l.meta.podUid) {
    throw new LaunchError(
      INIT_STAGE,
      'PodReplaced',
      `Pod ${l.namespace}/${l.meta.podName} is not the one Berth recorded (UID ${pod.metadata?.uid ?? '?'}): another object took its name, so Berth does not touch it`,
    );
  }
  if (pod !== undefined && pod.metadata?.uid === l.meta.podUid && usable(pod)) return reattach(l, pod, opts.secrets);
  const gone = whyGone(pod, opts.cause);
  const noticedAt = new Date().toISOString();
  if (l.meta.workspaceMode === 'empty_dir') {
    // nothing is created: a new Pod would start with an empty workspace, as if the work were still there
    throw new LaunchError(INIT_STAGE, REASON.workspaceLost, `the Pod ${l.namespace}/${l.meta.podName} is gone (${gone.reason}: ${gone.message}) and its workspace was an emptyDir: the work is lost`);
  }
  // Say why before the new Pod's stages run: a replacement is no silent relaunch.
  if (opts.explainReplacement) l.report({ stage: STAGE.podReady, status: 'waiting', reason: gone.reason, message: `${gone.message}; creating a new one on the same volume` });
  const old: EventObjectRef | null = l.meta.podUid === null ? null : { kind: 'Pod', namespace: l.namespace, name: l.meta.podName, uid: l.meta.podUid };
  if (pod !== undefined && pod.metadata?.uid === l.meta.podUid) {
    // our Pod, but failed or finishing: it goes first (verified by UID and labels), its Event before it
    if (old !== null) await l.env.events.emit(replacingEvent(old, l.identity.sessionId, gone), launchSecrets(l.req));
    await deleteAll(l.kube.objects, [{ kind: 'Pod', namespace: l.namespace, name: l.meta.podName, uid: l.meta.podUid ?? '', labels: ownershipLabels(l.identity) }], AbortSignal.timeout(60_000), 'refuse');
  }
  const instance = await replace(l);
  if (old !== null && l.createdPod !== null) {
    await l.env.events.emit(replacedEvent({ kind: 'Pod', namespace: l.namespace, ...l.createdPod }, old, l.identity.sessionId, gone), launchSecrets(l.req));
  }
  return { ...instance, replaced: { reason: gone.reason, message: gone.message, at: noticedAt } };
}

/**
 * A replacement Pod whose create an earlier resume did not live to record (its row was left at
 * `pod_creating`, then stopped): found by its create nonce's digest, it is deleted first, so the new
 * Pod can take the name. A same-name object that is not it is left to the check below (PodReplaced).
 */
async function removePendingPod(l: KubeLaunchState): Promise<void> {
  if (l.meta.pendingCreateDigest === null) return;
  const deadline = AbortSignal.timeout(60_000);
  const target = await pendingTarget(l.kube.objects, l.meta, recordedState(l.req.previous?.metadata ?? {}), deadline, l.env.log);
  if (target !== null) {
    await l.env.events.emit(reapedPendingPodEvent({ kind: 'Pod', namespace: target.namespace, name: target.name, uid: target.uid }, l.identity.sessionId), launchSecrets(l.req));
    await deleteAll(l.kube.objects, [target], deadline, 'refuse');
  }
  l.meta = { ...l.meta, pendingCreateDigest: null };
}

/**
 * Why the recorded Pod cannot be reattached: deleted, evicted, failed, finished or being deleted.
 * A Pod failed with no reason left that the watch saw evicted (`cause`) is explained as evicted:
 * its status was rewritten after the eviction (the kubelet drops a reason it did not set itself).
 */
export function whyGone(pod: V1Pod | undefined, cause?: { reason: string; message: string }): { reason: string; message: string } {
  if (pod === undefined) return { reason: 'PodDeleted', message: "the session's Pod was deleted" };
  if (pod.metadata?.deletionTimestamp) return { reason: 'PodDeleting', message: "the session's Pod is being deleted" };
  if (berthGated(pod)) return { reason: 'SchedulingGated', message: "the session's Pod never left Berth's scheduling gate (the launch that created it did not finish), so it never ran" };
  const reason = pod.status?.reason;
  if (pod.status?.phase === 'Failed') {
    if (!reason && cause?.reason === 'PodEvicted') return cause;
    return { reason: reason === 'Evicted' ? 'PodEvicted' : 'PodFailed', message: `the session's Pod failed${reason ? ` (${reason}${pod.status?.message ? `: ${pod.status.message}` : ''})` : ''}` };
  }
  return { reason: 'PodCompleted', message: "the session's Pod completed" };
}

/** A Pod to reconnect to: not ending, and not still behind Berth's gate (one never lifted never ran: it is replaced). */
function usable(pod: V1Pod): boolean {
  return !pod.metadata?.deletionTimestamp && pod.status?.phase !== 'Failed' && pod.status?.phase !== 'Succeeded' && !berthGated(pod);
}

function restartCountOf(l: KubeLaunchState, pod: V1Pod): number {
  return pod.status?.containerStatuses?.find((s) => s.name === l.profile.mainContainer)?.restartCount ?? 0;
}

/** The recorded Pod runs: verify its labels, reconnect to agentctl in it. */
async function reattach(l: KubeLaunchState, pod: V1Pod, secrets: InstanceSecrets): Promise<ExecutorInstance> {
  const problems = ownershipLabelProblems(pod.metadata?.labels, ownershipLabels(l.identity));
  if (problems.length > 0) throw new LaunchError(INIT_STAGE, 'OwnershipMismatch', `Pod ${l.namespace}/${l.meta.podName}: ${problems.join('; ')}; not reconnecting`);
  const c = await l.stage(STAGE.agentctlConnect, () =>
    reconnect(
      { forward: l.kube.forward, fetch: l.env.fetch, namespace: l.namespace, pod: l.meta.podName, instanceId: l.identity.instanceId, instanceEnv: instanceEnv(l.req), labels: {}, ...(l.signal ? { signal: l.signal } : {}) },
      secrets,
      { timeoutMs: RECONNECT_TIMEOUT_MS, freshNonce: () => deliverFreshNonce(l, l.meta.podName) },
    ),
  );
  l.meta = { ...l.meta, remotePort: c.instancePort, restartCount: restartCountOf(l, pod) };
  return buildInstance(l, c, { authToken: c.token, bootstrapNonce: c.nonce }, c.restarted || c.recreated, [POD_AGENTCTL.launcher]);
}

/** A new Pod under the recorded name on the recorded claim; a new nonce (never the last Pod's); no clone. */
async function replace(l: KubeLaunchState): Promise<ExecutorInstance> {
  const nonce = createNonce(l.env.random);
  const pod = new PodStart(l, { name: l.meta.podName, nonce, clone: false });
  try {
    await l.stage(STAGE.storage, () => verifyClaim(l));
    await l.stage(STAGE.podReady, () => pod.ready());
    await l.stage(STAGE.bootstrap, () => pod.bootstrap());
    const connected = await l.stage(STAGE.agentctlConnect, () => pod.connect());
    return buildInstance(l, connected, { authToken: connected.token, bootstrapNonce: nonce }, true, pod.agentctlCommand);
  } catch (err) {
    pod.abandon();
    await l.recordFailure(err, 'Berth deletes the new Pod; the workspace volume is kept.');
    // A failed resume removes the Pod it created (the claim and the row stay: resume again).
    const rb = new Rollback();
    if (l.createdPod) rb.record(...(await deleteEach(l.kube.objects, [{ kind: 'Pod', namespace: l.namespace, ...l.createdPod, labels: null }], rb.signal)));
    throw rb.finish(err);
  } finally {
    pod.close();
  }
}

/** The recorded claim must still be the recorded one (same UID); an existing claim is only read. */
async function verifyClaim(l: KubeLaunchState): Promise<void> {
  if (l.meta.pvcName === null) return;
  const pvc = await l.kube.objects.getPvc(l.namespace, l.meta.pvcName, l.signal);
  if (pvc === undefined) throw new LaunchError(STAGE.storage, 'ClaimNotFound', `the workspace PVC ${l.namespace}/${l.meta.pvcName} is gone: the work cannot be recovered (remove the session)`);
  if (pvc.metadata?.uid !== l.meta.pvcUid) {
    throw new LaunchError(STAGE.storage, 'ClaimReplaced', `PVC ${l.namespace}/${l.meta.pvcName} is not the one Berth recorded (UID ${pvc.metadata?.uid ?? '?'}); not mounting it`);
  }
  if (l.meta.pvcCreated) {
    const problems = ownershipLabelProblems(pvc.metadata?.labels, ownershipLabels(l.identity));
    if (problems.length > 0) throw new LaunchError(STAGE.storage, 'OwnershipMismatch', `PVC ${l.namespace}/${l.meta.pvcName}: ${problems.join('; ')}`);
  }
  l.pvc = pvc;
}

function recordedState(metadata: Readonly<Record<string, string>>): string {
  return metadata[META.state] ?? 'ready';
}
