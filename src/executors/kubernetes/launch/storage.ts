/**
 * Stage `storage` (spec §4.2): per workspace mode, create the managed PVC (checkpointed before the
 * create with its nonce's digest, again the moment it exists with its UID, then verified as
 * admitted), read the existing claim, or nothing for empty_dir. A new claim is given a short moment
 * to bind (claim-binding.ts) while the Pod is created behind a scheduling gate (gate.ts; the gate
 * is lifted by `pod_ready`); one that takes longer is left to `pod_ready`, which reports the binding
 * with its own budget.
 * @module
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { LaunchError } from '../../launch-kit/index.js';
import { CHECKPOINT, STAGE } from '../constants.js';
import { AdmissionError, assertPvcAdmitted } from '../compose/index.js';
import { awaitClaimBinding } from './claim-binding.js';
import { createOwned } from './create.js';
import { desiredPvc } from './desired.js';
import type { KubeLaunchState } from './context.js';

export async function provisionStorage(l: KubeLaunchState): Promise<void> {
  const ws = l.profile.workspace;
  if (ws.mode === 'empty_dir') return;
  if (ws.mode === 'existing_claim') {
    await useExistingClaim(l, ws.claimName ?? '');
    return;
  }
  const desired = desiredPvc({ profile: l.profile, identity: l.identity, namespace: l.namespace, random: l.env.random, installationId: l.env.installationId });
  // Recorded before the create: a crash before its UID is recorded still finds the claim (by its nonce).
  await l.checkpointPending(CHECKPOINT.pvcCreating, desired);
  const created = await createOwned({
    kind: 'PVC',
    stage: STAGE.storage,
    desired,
    create: () => l.kube.objects.createPvc(l.namespace, desired, { ...(l.signal ? { signal: l.signal } : {}) }),
    get: (signal) => l.kube.objects.getPvc(l.namespace, desired.metadata?.name ?? '', signal),
  });
  const uid = created.metadata?.uid ?? '';
  l.createdPvc = { name: created.metadata?.name ?? '', uid };
  l.pvc = created;
  l.meta = { ...l.meta, pvcName: l.createdPvc.name, pvcUid: uid, pvcCreated: true, pendingCreateDigest: null };
  // Recorded before anything else can fail: from here a crash or an error deletes it by UID.
  await l.checkpoint(CHECKPOINT.pvcCreated);
  try {
    assertPvcAdmitted(desired, created);
  } catch (err) {
    if (err instanceof AdmissionError) throw new LaunchError(STAGE.storage, 'AdmissionMutated', `the API server admitted a changed PVC: ${err.message}`, { cause: err });
    throw err;
  }
  await l.checkpoint(CHECKPOINT.pvcAdmitted);
  await bindBehindGate(l, created);
}

/**
 * The claim binds while the launch's Pod is created behind the scheduling gate, when the launch
 * makes one (its PodStart) and the claim is not bound yet; else the Pod is created by `pod_ready`
 * after the wait, as before. The stage ends only once that create settled, so what a failure or a
 * crash from here leaves is recorded; an error of the create is `pod_ready`'s, and ends the wait.
 */
async function bindBehindGate(l: KubeLaunchState, pvc: V1PersistentVolumeClaim): Promise<void> {
  const creating = pvc.status?.phase === 'Bound' ? undefined : l.createGatedPod?.();
  if (creating === undefined) {
    await awaitClaimBinding(l, pvc);
    return;
  }
  const cancel = new AbortController();
  void creating.then((created) => {
    if (!created) cancel.abort();
  });
  try {
    await awaitClaimBinding(l, pvc, { gated: true, cancel: cancel.signal });
  } finally {
    await creating;
  }
}

/** existing_claim: the operator's claim, only read (never created, never deleted). */
async function useExistingClaim(l: KubeLaunchState, claimName: string): Promise<void> {
  const claim = await l.kube.objects.getPvc(l.namespace, claimName, l.signal);
  if (claim === undefined) {
    throw new LaunchError(STAGE.storage, 'ClaimNotFound', `existing claim ${l.namespace}/${claimName} was not found (create it, or fix profiles.*.kubernetes.workspace.claim_name)`);
  }
  const uid = claim.metadata?.uid;
  if (!uid || claim.metadata?.name !== claimName || claim.metadata.namespace !== l.namespace) {
    throw new LaunchError(STAGE.storage, 'IdentityIncomplete', `existing claim ${l.namespace}/${claimName} came back without its UID or under another name`);
  }
  if (claim.metadata.deletionTimestamp) throw new LaunchError(STAGE.storage, 'ClaimDeleting', `existing claim ${l.namespace}/${claimName} is being deleted`);
  l.pvc = claim;
  l.meta = { ...l.meta, pvcName: claimName, pvcUid: uid, pvcCreated: false };
}
