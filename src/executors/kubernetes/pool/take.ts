/**
 * The first half of a claim: a member taken in the store is checked (its Pod running, its main
 * container never restarted, its PVC there), its Pod and PVC relabelled to the session with the UID
 * and resourceVersion pinned, and recorded as the session's (checkpoint `pool_claimed`); only then is
 * its row deleted. The objects as the pool's latest pass listed them are tried first: the pinned
 * patch applies only if nothing changed since, so the checks made on them still hold, and a read is
 * saved; after a change (409 Conflict), when one is gone, or when the listed objects would fail
 * the checks, they are read and checked again.
 * @module
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { ownershipLabels } from '../compose/index.js';
import { CHECKPOINT, META } from '../constants.js';
import { isConflict, isNotFound } from '../kube/index.js';
import type { KubeLaunchState } from '../launch/context.js';
import type { AgentctlFlavor } from '../metadata.js';
import type { PoolContext } from './context.js';

export interface Member {
  id: string;
  podName: string;
  podUid: string;
  pvcName: string | null;
  pvcUid: string | null;
  pvcCreated: boolean;
  flavor: AgentctlFlavor | null;
  restartCount: number;
  nonce: string;
}

/** What a member's row records of its objects. */
interface Recorded {
  podName: string;
  podUid: string;
  pvcName: string | null;
  pvcUid: string | null;
  /** A PVC made for the member (relabelled with it), not an operator's claim. */
  managedPvc: boolean;
  restartCount: number;
}

function recorded(meta: Readonly<Record<string, string>>): Recorded {
  const podName = meta[META.podName];
  const podUid = meta[META.podUid];
  if (podName === undefined || podUid === undefined) throw new Error('its row records no Pod');
  const pvcName = meta[META.pvcName] ?? null;
  const pvcUid = meta[META.pvcUid] ?? null;
  const managedPvc = meta[META.pvcCreated] === 'true' && pvcName !== null && pvcUid !== null;
  return { podName, podUid, pvcName, pvcUid, managedPvc, restartCount: Number(meta[META.restartCount] ?? '0') };
}

/** Why the member cannot be handed out as these objects show it, or null. */
function trouble(l: KubeLaunchState, r: Recorded, pod: V1Pod | undefined, pvc: V1PersistentVolumeClaim | undefined): string | null {
  const main = pod?.status?.containerStatuses?.find((c) => c.name === l.profile.mainContainer);
  if (pod === undefined || pod.metadata?.uid !== r.podUid) return `its Pod ${r.podName} is gone`;
  if (pod.metadata.deletionTimestamp || pod.status?.phase !== 'Running' || main?.state?.running === undefined) return `its Pod ${r.podName} is not running`;
  if ((main.restartCount ?? 0) !== r.restartCount) return `its Pod's main container restarted since it was made`;
  if (r.managedPvc && (pvc?.metadata?.uid !== r.pvcUid || pvc?.metadata?.deletionTimestamp)) return `its PVC ${r.pvcName} is gone`;
  return null;
}

/** Relabels both objects to the session, each pinned to the version given. */
async function relabel(l: KubeLaunchState, r: Recorded, pod: V1Pod, pvc: V1PersistentVolumeClaim | undefined): Promise<V1Pod> {
  const labels = ownershipLabels(l.identity);
  const [relabelled] = await Promise.all([
    l.kube.objects.relabelPod({ namespace: l.namespace, name: r.podName, uid: r.podUid, resourceVersion: pod.metadata?.resourceVersion ?? '' }, labels, l.signal),
    r.managedPvc && r.pvcName !== null && r.pvcUid !== null
      ? l.kube.objects.relabelPvc({ namespace: l.namespace, name: r.pvcName, uid: r.pvcUid, resourceVersion: pvc?.metadata?.resourceVersion ?? '' }, labels, l.signal)
      : Promise.resolve(undefined),
  ]);
  return relabelled;
}

/** The relabel from the listed objects; null when they would not pass the checks or changed since (the caller reads them). */
async function relabelAsListed(p: PoolContext, l: KubeLaunchState, r: Recorded): Promise<V1Pod | null> {
  const pod = p.seen.pods.get(r.podName);
  const pvc = r.pvcName === null ? undefined : p.seen.pvcs.get(r.pvcName);
  if (pod === undefined || trouble(l, r, pod, pvc) !== null) return null;
  try {
    return await relabel(l, r, pod, pvc);
  } catch (err) {
    // changed or gone since the list: the read says which (and why, for the user)
    if (isConflict(err) || isNotFound(err)) return null;
    throw err;
  }
}

/** Checks the member, relabels its objects to the session and records them as the session's; then deletes its row. */
export async function takeMember(p: PoolContext, l: KubeLaunchState, id: string, meta: Readonly<Record<string, string>>, nonce: Promise<string>): Promise<Member> {
  const r = recorded(meta);
  let relabelled = await relabelAsListed(p, l, r);
  if (relabelled === null) {
    const [pod, pvc] = await Promise.all([
      l.kube.objects.getPod(l.namespace, r.podName, l.signal),
      r.managedPvc && r.pvcName !== null ? l.kube.objects.getPvc(l.namespace, r.pvcName, l.signal) : Promise.resolve(undefined),
    ]);
    const why = trouble(l, r, pod, pvc);
    if (why !== null || pod === undefined) throw new Error(why ?? `its Pod ${r.podName} is gone`);
    relabelled = await relabel(l, r, pod, pvc);
  }
  const member: Member = {
    id,
    ...r,
    pvcCreated: meta[META.pvcCreated] === 'true',
    flavor: (meta[META.agentctlFlavor] as AgentctlFlavor | undefined) ?? null,
    nonce: await nonce,
  };
  l.pod = relabelled;
  l.createdPod = { name: r.podName, uid: r.podUid };
  if (r.managedPvc && r.pvcName !== null && r.pvcUid !== null) l.createdPvc = { name: r.pvcName, uid: r.pvcUid };
  l.meta = { ...l.meta, podName: r.podName, podUid: r.podUid, pvcName: r.pvcName, pvcUid: r.pvcUid, pvcCreated: member.pvcCreated, agentctlFlavor: member.flavor, restartCount: r.restartCount };
  await l.checkpoint(CHECKPOINT.poolClaimed);
  await p.store.deletePoolMember(id);
  return member;
}
