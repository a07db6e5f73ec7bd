/**
 * Metadata checks shared by the admitted Pod and PVC (spec §4.4): the API server may add unrelated
 * labels, annotations and managedFields, but nothing that moves ownership or lifecycle away from Berth.
 * @module
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { BERTH_KEY_PREFIX } from '../constants.js';
import { ownershipLabelProblems } from './identity.js';

/** Finalizers the API server adds on its own: the PVC protection controller's. */
export const ALLOWED_PVC_FINALIZERS: readonly string[] = ['kubernetes.io/pvc-protection'];

/** Findings about `actual`'s metadata, each starting with `admitted <kind>`. */
export function metadataProblems(kind: 'Pod' | 'PVC', desired: V1ObjectMeta, actual: V1ObjectMeta | undefined, allowedFinalizers: readonly string[] = []): string[] {
  const prefix = `admitted ${kind}`;
  const meta = actual ?? {};
  const problems: string[] = [];
  if (meta.name !== desired.name) problems.push(`${prefix} changed metadata.name`);
  if (meta.namespace !== desired.namespace) problems.push(`${prefix} changed metadata.namespace`);
  if ((meta.ownerReferences ?? []).length > 0) problems.push(`${prefix} added an owner reference`);
  for (const f of meta.finalizers ?? []) {
    if (!allowedFinalizers.includes(f)) problems.push(`${prefix} added the finalizer "${f}"`);
  }
  for (const p of ownershipLabelProblems(meta.labels, desired.labels ?? {})) problems.push(`${prefix} ${p}`);
  const want = desired.annotations ?? {};
  const have = meta.annotations ?? {};
  for (const key of Object.keys(want)) {
    if (key.startsWith(BERTH_KEY_PREFIX) && have[key] !== want[key]) problems.push(`${prefix} owned annotation "${key}" changed`);
  }
  for (const key of Object.keys(have)) {
    if (key.startsWith(BERTH_KEY_PREFIX) && !(key in want)) problems.push(`${prefix} added the owned annotation "${key}"`);
  }
  return problems;
}
