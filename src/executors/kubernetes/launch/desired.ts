/**
 * The Pod and managed PVC a session creates, composed from its profile and identity, each with a
 * fresh create nonce: one definition shared by the launch stages (`storage`, `pod_ready`) and
 * `berth doctor`'s server-side dry-run, so doctor admits exactly what a launch would create.
 * @module
 */
import type { V1ObjectMeta, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { composePod, composePvc, createNonce, resourceNames, type RandomSource, type ResourceIdentity } from '../compose/index.js';
import { ANNOTATION } from '../constants.js';
import type { KubernetesProfile } from '../types.js';

export interface DesiredInput {
  profile: KubernetesProfile;
  identity: ResourceIdentity;
  namespace: string;
  random: RandomSource;
  /** The installation id stamped on the object (annotation `berth.dev/installation`); null: none. */
  installationId?: string | null;
}

/** Stamps the installation id on a composed object (its own annotation, so ownership labels stay as they were). */
function stamped<T extends { metadata?: V1ObjectMeta }>(obj: T, installationId: string | null | undefined): T {
  if (installationId == null) return obj;
  const metadata = obj.metadata ?? {};
  obj.metadata = { ...metadata, annotations: { ...(metadata.annotations ?? {}), [ANNOTATION.installation]: installationId } };
  return obj;
}

/** The managed_pvc claim (named from the instance id). Throws a ComposeFieldError for another mode. */
export function desiredPvc(input: DesiredInput): V1PersistentVolumeClaim {
  const pvc = composePvc({
    workspace: input.profile.workspace,
    identity: input.identity,
    namespace: input.namespace,
    name: resourceNames(input.identity.instanceId).pvc,
    createNonce: createNonce(input.random),
  });
  return stamped(pvc, input.installationId);
}

/**
 * The session Pod under `name` (the instance's name, or the recorded one for a replacement);
 * `managedPvcName` is the claim Berth created (managed_pvc), null otherwise; `schedulingGate`: behind
 * Berth's scheduling gate (a Pod created while its new claim binds, launch/gate.ts).
 */
export function desiredPod(input: DesiredInput, name: string, managedPvcName: string | null, opts: { schedulingGate?: boolean } = {}): V1Pod {
  const pod = composePod({
    profile: input.profile,
    identity: input.identity,
    namespace: input.namespace,
    name,
    managedPvcName,
    createNonce: createNonce(input.random),
    ...(opts.schedulingGate === true ? { schedulingGate: true } : {}),
  });
  return stamped(pod, input.installationId);
}
