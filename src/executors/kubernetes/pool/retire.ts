/**
 * Removing a pool member: its Pod, then its PVC, each by the UID its row records (an object under
 * the same name with another UID is someone else's and is left alone), then its row and the nonce
 * it references. A row whose objects could not all be deleted stays, for the next attempt.
 * @module
 */
import { errorMessage } from '../../../shared/errors.js';
import { deleteEach, type CleanupTarget } from '../cleanup.js';
import { META } from '../constants.js';
import type { KubernetesMetadata } from '../metadata.js';
import type { PoolContext } from './context.js';

/** The secretRefs key of a member's bootstrap nonce. */
export const MEMBER_NONCE = 'bootstrap_nonce';

/** How long one member's deletes may take (a Pod's grace period included). */
const RETIRE_TIMEOUT_MS = 90_000;

/** The recorded objects of a member (Pod before PVC), from its launch state's metadata. */
export function memberTargets(meta: Pick<KubernetesMetadata, 'namespace' | 'podName' | 'podUid' | 'pvcName' | 'pvcUid' | 'pvcCreated'>): CleanupTarget[] {
  const targets: CleanupTarget[] = [];
  if (meta.podUid !== null) targets.push({ kind: 'Pod', namespace: meta.namespace, name: meta.podName, uid: meta.podUid, labels: null });
  if (meta.pvcCreated && meta.pvcName !== null && meta.pvcUid !== null) targets.push({ kind: 'PVC', namespace: meta.namespace, name: meta.pvcName, uid: meta.pvcUid, labels: null });
  return targets;
}

/** The same, read from a member row's metadata as stored (tolerant: a row cut short records less). */
export function rowTargets(metadata: Readonly<Record<string, string>>): CleanupTarget[] {
  const namespace = metadata[META.namespace];
  if (namespace === undefined) return [];
  return memberTargets({
    namespace,
    podName: metadata[META.podName] ?? '',
    podUid: metadata[META.podUid] ?? null,
    pvcName: metadata[META.pvcName] ?? null,
    pvcUid: metadata[META.pvcUid] ?? null,
    pvcCreated: metadata[META.pvcCreated] === 'true',
  });
}

/** Deletes the member's objects and then its row; false (the row kept) when a delete failed. */
export async function retireMember(p: Pick<PoolContext, 'env' | 'store'>, id: string, targets: CleanupTarget[]): Promise<boolean> {
  const errors = await deleteEach(p.env.kube.objects, targets, AbortSignal.timeout(RETIRE_TIMEOUT_MS));
  if (errors.length > 0) {
    p.env.log.warn({ member: id, errors: errors.map(errorMessage) }, 'pool member: not every object could be deleted; its row stays for the next attempt');
    return false;
  }
  await p.store.deletePoolMember(id);
  return true;
}
