/**
 * Deterministic Kubernetes names of a session's objects (spec §3.5): the same instance id always
 * gives the same Pod and PVC names, so a restarted controller can find them again.
 * @module
 */
import { createHash } from 'node:crypto';

/** First 16 hex characters (8 bytes) of sha256(instanceId). */
export function resourceSuffix(instanceId: string): string {
  return createHash('sha256').update(instanceId, 'utf8').digest('hex').slice(0, 16);
}

interface ResourceNames {
  pod: string;
  pvc: string;
}

/** `berth-<suffix>` and `berth-<suffix>-workspace`. A replacement Pod reuses the recorded name instead. */
export function resourceNames(instanceId: string): ResourceNames {
  const suffix = resourceSuffix(instanceId);
  return { pod: `berth-${suffix}`, pvc: `berth-${suffix}-workspace` };
}
