/**
 * The object of a create whose UID was never recorded: the controller died between the create and
 * its checkpoint (or while the create was in flight). The row then says `pvc_creating` or
 * `pod_creating` with the digest of the object's create nonce; the object is found under its
 * recorded name and counts as Berth's only when its nonce and ownership labels match — then it is
 * cleaned up by its UID like any recorded object. An object that does not match is never touched.
 * @module
 */
import type { Logger } from '../../shared/logger.js';
import type { CleanupTarget } from './cleanup.js';
import { ownershipLabels, pendingCreateProblems, resourceNames } from './compose/index.js';
import { CHECKPOINT } from './constants.js';
import type { KubeObjects } from './kube/index.js';
import { identityOf, type KubernetesMetadata } from './metadata.js';

/** The pending create's object as a cleanup target (by UID, exact labels), or null when it does not exist or is not ours. */
export async function pendingTarget(objects: KubeObjects, meta: KubernetesMetadata, state: string, signal: AbortSignal, log: Logger): Promise<CleanupTarget | null> {
  const digest = meta.pendingCreateDigest;
  if (digest === null) return null;
  const kind = state === CHECKPOINT.pvcCreating ? 'PVC' : 'Pod';
  const name = kind === 'PVC' ? resourceNames(meta.instanceId).pvc : meta.podName;
  const found = kind === 'PVC' ? await objects.getPvc(meta.namespace, name, signal) : await objects.getPod(meta.namespace, name, signal);
  if (found === undefined) return null; // the create never happened (or was rolled back)
  const labels = ownershipLabels(identityOf(meta));
  const problems = pendingCreateProblems(found.metadata ?? {}, digest, labels);
  if (problems.length > 0) {
    log.warn({ session: meta.sessionId, kind, name, problems }, 'an object under the name of an unrecorded create is not that create: left alone');
    return null;
  }
  return { kind, namespace: meta.namespace, name, uid: found.metadata?.uid ?? '', labels };
}
