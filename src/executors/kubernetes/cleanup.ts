/**
 * Deleting what Berth created, and only that (spec §4.9, §8.1): every target is read and checked
 * first (name, namespace, UID and — once admission was verified — the exact ownership labels); any
 * mismatch deletes nothing at all. Deletes carry UID + resourceVersion preconditions, and each call
 * waits until the object is really gone, under a deadline that does not depend on the caller.
 * @module
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { ownershipLabelProblems } from './compose/index.js';
import { isConflict, type DeleteOutcome, type KubeObjects } from './kube/index.js';

type Kind = 'Pod' | 'PVC';

export interface CleanupTarget {
  kind: Kind;
  namespace: string;
  name: string;
  uid: string;
  /** The labels it must carry exactly; null: UID only (not admission-verified, e.g. a rollback). */
  labels: Record<string, string> | null;
}

/** Thrown when a recorded object is not what the inventory says: nothing was deleted. */
class CleanupRefusedError extends Error {
  override readonly name = 'CleanupRefusedError';
}

export interface Verified {
  target: CleanupTarget;
  /** The resourceVersion read, for the delete precondition; null when the object is already gone. */
  resourceVersion: string | null;
}

function read(objects: KubeObjects, t: CleanupTarget, signal: AbortSignal): Promise<{ metadata?: V1ObjectMeta } | undefined> {
  return t.kind === 'Pod' ? objects.getPod(t.namespace, t.name, signal) : objects.getPvc(t.namespace, t.name, signal);
}

/**
 * Reads and checks one target. `foreign: 'refuse'` (a stop) throws on a same-name object with
 * another UID; `'skip'` (a rollback: the name was taken over after our object went) reports it as
 * gone without touching it.
 */
export async function verifyTarget(objects: KubeObjects, t: CleanupTarget, signal: AbortSignal, foreign: 'refuse' | 'skip'): Promise<Verified> {
  const found = await read(objects, t, signal);
  if (found === undefined) return { target: t, resourceVersion: null };
  const m = found.metadata ?? {};
  if (m.name !== t.name || m.namespace !== t.namespace) throw new CleanupRefusedError(`${t.kind} ${t.namespace}/${t.name}: the API returned another object; nothing was deleted`);
  if (m.uid !== t.uid) {
    if (foreign === 'skip') return { target: t, resourceVersion: null };
    throw new CleanupRefusedError(
      `${t.kind} ${t.namespace}/${t.name} is not the one Berth recorded (UID ${m.uid ?? '?'}, recorded ${t.uid}): it was replaced by someone else, so nothing was deleted (remove it yourself if it is yours to remove)`,
    );
  }
  if (t.labels !== null) {
    const problems = ownershipLabelProblems(m.labels, t.labels);
    if (problems.length > 0) throw new CleanupRefusedError(`${t.kind} ${t.namespace}/${t.name}: ${problems.join('; ')}; nothing was deleted`);
  }
  return { target: t, resourceVersion: m.resourceVersion ?? null };
}

/**
 * Deletes a verified target (UID + resourceVersion preconditions) and waits until it is gone (a Pod
 * with its containers: see deletePod). `absent`: it was gone before this call.
 */
async function deleteVerified(objects: KubeObjects, v: Verified, signal: AbortSignal): Promise<DeleteOutcome> {
  if (v.resourceVersion === null) return 'absent';
  const { target: t } = v;
  const pre = { uid: t.uid, resourceVersion: v.resourceVersion };
  if (t.kind === 'Pod') return objects.deletePod(t.namespace, t.name, pre, signal);
  return objects.deletePvc(t.namespace, t.name, pre, signal);
}

/** How often a delete is re-verified and retried after its resourceVersion moved. */
const CONFLICT_RETRIES = 5;

/**
 * Deletes a verified target; when its resourceVersion moved in between (a PVC's binding, a Pod's
 * status: the controllers update them all the time) it is read and checked again — same UID, same
 * labels — and the delete retried. A changed identity still deletes nothing.
 */
export async function deleteChecked(objects: KubeObjects, v: Verified, signal: AbortSignal, foreign: 'refuse' | 'skip'): Promise<DeleteOutcome> {
  let current = v;
  for (let attempt = 0; ; attempt++) {
    try {
      return await deleteVerified(objects, current, signal);
    } catch (err) {
      if (!isConflict(err) || attempt >= CONFLICT_RETRIES) throw err;
      current = await verifyTarget(objects, current.target, signal, foreign);
    }
  }
}

/** Verifies every target first, then deletes them in order (Pod before PVC). */
export async function deleteAll(objects: KubeObjects, targets: CleanupTarget[], signal: AbortSignal, foreign: 'refuse' | 'skip'): Promise<void> {
  const verified: Verified[] = [];
  for (const t of targets) verified.push(await verifyTarget(objects, t, signal, foreign));
  for (const v of verified) await deleteChecked(objects, v, signal, foreign);
}

/** The same, but each object is re-read right before its own delete (a rollback after an admission failure). */
export async function deleteEach(objects: KubeObjects, targets: CleanupTarget[], signal: AbortSignal): Promise<unknown[]> {
  const errors: unknown[] = [];
  for (const t of targets) {
    try {
      await deleteChecked(objects, await verifyTarget(objects, t, signal, 'skip'), signal, 'skip');
    } catch (err) {
      errors.push(err);
    }
  }
  return errors;
}
