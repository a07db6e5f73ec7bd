/**
 * Verifies the PVC the API server admitted against the one Berth composed (spec §4.4): binding
 * (volumeName, status), the protection finalizer, a defaulted StorageClass and quantities written
 * differently (`1024Mi` for `1Gi`) are fine; any other change to the storage request is a finding.
 * @module
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { quantitiesEqual } from '../config/index.js';
import { ALLOWED_PVC_FINALIZERS, metadataProblems } from './admission-metadata.js';
import { sameObject } from './canonical.js';
import { AdmissionError } from './errors.js';

function sameQuantities(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {}).sort();
  const kb = Object.keys(b ?? {}).sort();
  if (ka.join('\n') !== kb.join('\n')) return false;
  return ka.every((k) => quantitiesEqual(String(a?.[k]), String(b?.[k])));
}

/** Every finding about `actual`; empty when it is acceptable. */
export function pvcAdmissionProblems(desired: V1PersistentVolumeClaim, actual: V1PersistentVolumeClaim): string[] {
  const problems = metadataProblems('PVC', desired.metadata ?? {}, actual.metadata, ALLOWED_PVC_FINALIZERS);
  const want = desired.spec ?? {};
  const have = actual.spec ?? {};
  const modes = (m: string[] | undefined): string => [...new Set(m ?? [])].sort().join(',');
  if (modes(have.accessModes) !== modes(want.accessModes)) problems.push('admitted PVC mutated owned storage requirements (spec.accessModes)');
  if ((have.volumeMode ?? 'Filesystem') !== (want.volumeMode ?? 'Filesystem')) problems.push('admitted PVC mutated owned storage requirements (spec.volumeMode)');
  if (!sameQuantities(have.resources?.requests, want.resources?.requests)) problems.push('admitted PVC mutated owned storage requirements (spec.resources.requests)');
  if (!sameQuantities(have.resources?.limits, want.resources?.limits)) problems.push('admitted PVC mutated owned storage requirements (spec.resources.limits)');
  // An unset class is filled in by the DefaultStorageClass admission plugin: only an explicit one is owned.
  if (want.storageClassName !== undefined && have.storageClassName !== want.storageClassName) {
    problems.push('admitted PVC mutated owned storage requirements (spec.storageClassName)');
  }
  if ((have.volumeAttributesClassName ?? null) !== (want.volumeAttributesClassName ?? null)) {
    problems.push('admitted PVC mutated owned storage requirements (spec.volumeAttributesClassName)');
  }
  for (const key of ['selector', 'dataSource', 'dataSourceRef'] as const) {
    if (!sameObject(have[key], want[key])) problems.push(`admitted PVC mutated owned storage requirements (spec.${key})`);
  }
  return problems;
}

/** Throws an {@link AdmissionError} listing every finding. */
export function assertPvcAdmitted(desired: V1PersistentVolumeClaim, actual: V1PersistentVolumeClaim): void {
  const problems = pvcAdmissionProblems(desired, actual);
  if (problems.length > 0) throw new AdmissionError('PVC', problems);
}
