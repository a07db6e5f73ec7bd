/**
 * Rewrites the labels of one Pod or PVC, pinned to the version that was read: a JSON merge patch
 * that carries the object's UID and resourceVersion, so the API server applies it only to that
 * exact object as it was (409 Conflict otherwise; nothing changes then). A `null` value removes
 * the label. Used by the warm pool's claim, which hands a member's objects to a session.
 * @module
 */
import { PatchStrategy, setHeaderOptions, type V1ObjectMeta, type V1PersistentVolumeClaim, type V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from './client.js';

/** The object to relabel, exactly as read. */
export interface RelabelTarget {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
}

export type LabelChanges = Readonly<Record<string, string | null>>;

function patchBody(target: RelabelTarget, labels: LabelChanges): { metadata: V1ObjectMeta } {
  return { metadata: { uid: target.uid, resourceVersion: target.resourceVersion, labels: labels as Record<string, string> } };
}

/** The Pod as it is after the patch. @throws KubeApiError (`Conflict` when it changed, `NotFound` when gone) */
export function relabelPod(client: KubeClient, target: RelabelTarget, labels: LabelChanges, signal?: AbortSignal): Promise<V1Pod> {
  return client.request(`relabel pod ${target.namespace}/${target.name}`, signal, (o) =>
    client.core.patchNamespacedPod({ namespace: target.namespace, name: target.name, body: patchBody(target, labels) }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch, o)),
  );
}

/** The PVC as it is after the patch. Same errors as {@link relabelPod}. */
export function relabelPvc(client: KubeClient, target: RelabelTarget, labels: LabelChanges, signal?: AbortSignal): Promise<V1PersistentVolumeClaim> {
  return client.request(`relabel pvc ${target.namespace}/${target.name}`, signal, (o) =>
    client.core.patchNamespacedPersistentVolumeClaim(
      { namespace: target.namespace, name: target.name, body: patchBody(target, labels) },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch, o),
    ),
  );
}
