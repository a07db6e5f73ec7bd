/**
 * Deleting a session's NetworkPolicy, and only the recorded one: it is read first, and deleted with
 * its UID as the precondition; a same-name policy with another UID is left alone. It goes after the
 * Pod it selected, so no Pod of the session ever runs without it.
 * @module
 */
import type { KubePolicies } from './kube/index.js';
import type { KubernetesMetadata } from './metadata.js';

interface PolicyTarget {
  namespace: string;
  name: string;
  uid: string;
}

/** The recorded policy of `m`, if any. */
export function policyTarget(m: Pick<KubernetesMetadata, 'namespace' | 'policyName' | 'policyUid'>): PolicyTarget | null {
  return m.policyName === null || m.policyUid === null ? null : { namespace: m.namespace, name: m.policyName, uid: m.policyUid };
}

/** Deletes the policy if it is still the recorded one; `false` when a same-name policy is another (left alone). */
export async function deletePolicy(policies: KubePolicies, t: PolicyTarget, signal: AbortSignal): Promise<boolean> {
  const found = await policies.get(t.namespace, t.name, signal);
  if (found === undefined) return true;
  if (found.metadata?.uid !== t.uid) return false;
  await policies.delete(t.namespace, t.name, { uid: t.uid }, signal);
  return true;
}
