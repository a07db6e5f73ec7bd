/**
 * Defaults that let a template naming only an image pass Pod Security `restricted` and still run.
 * Only fields the template leaves unset are filled in: an explicit template value always wins.
 * @module
 */
import type { V1Container, V1PodSpec } from '@kubernetes/client-node';
import { DEFAULT_POD_UID, DEFAULT_TERMINATION_GRACE_SECONDS } from '../constants.js';

/**
 * Pod level (mutates `spec`, a copy owned by the composer):
 * - `runAsNonRoot: true` and `seccompProfile: RuntimeDefault` when unset.
 * - `runAsUser`/`runAsGroup` 1000 only when the template says nothing about the user (neither
 *   `runAsNonRoot` nor `runAsUser` at pod level, nor `runAsUser` on the main container). Most images
 *   (node, busybox, distros) declare `USER root` or none, and the kubelet refuses to start a
 *   `runAsNonRoot` container whose image user is 0 or a name; a numeric uid makes it start. A
 *   template that sets its own user keeps it.
 * - `fsGroup` 1000 when unset, with `fsGroupChangePolicy: OnRootMismatch`: the kubelet then makes
 *   the workspace PVC group-writable for the Pod (a fresh volume is usually root-owned 0755) without
 *   re-chowning a large retained workspace on every start. emptyDirs are world-writable anyway.
 * - `enableServiceLinks: false` when unset: the agent's environment should not fill up with one
 *   set of variables per Service of the namespace.
 * - `terminationGracePeriodSeconds` 5 when unset: a stop deletes the Pod gracefully and waits
 *   for it; agentctl (PID 1) stops the agent on the kubelet's SIGTERM at once, so a long grace
 *   period would only slow a `stop` whose agent ignores SIGTERM.
 */
export function applyPodDefaults(spec: V1PodSpec, mainContainer: string): void {
  const sc = (spec.securityContext ??= {});
  const main = spec.containers.find((c) => c.name === mainContainer);
  const userUnspecified = sc.runAsNonRoot === undefined && sc.runAsUser === undefined && main?.securityContext?.runAsUser === undefined;
  sc.runAsNonRoot ??= true;
  if (userUnspecified) {
    sc.runAsUser = DEFAULT_POD_UID;
    sc.runAsGroup ??= DEFAULT_POD_UID;
  }
  if (sc.fsGroup === undefined) {
    sc.fsGroup = DEFAULT_POD_UID;
    sc.fsGroupChangePolicy ??= 'OnRootMismatch';
  }
  sc.seccompProfile ??= { type: 'RuntimeDefault' };
  spec.enableServiceLinks ??= false;
  spec.terminationGracePeriodSeconds ??= DEFAULT_TERMINATION_GRACE_SECONDS;
  for (const c of spec.containers) applyContainerDefaults(c);
  for (const c of spec.initContainers ?? []) applyContainerDefaults(c);
}

const SYS_ADMIN = new Set(['SYS_ADMIN', 'CAP_SYS_ADMIN']);

/**
 * `allowPrivilegeEscalation: false` and `capabilities.drop: [ALL]` when unset. Added capabilities
 * are kept (drop ALL then add is the documented `restricted` pattern). No escalation default for a
 * privileged or SYS_ADMIN container: the API server rejects that combination as contradictory.
 */
function applyContainerDefaults(c: V1Container): void {
  const sc = (c.securityContext ??= {});
  const caps = (sc.capabilities ??= {});
  caps.drop ??= ['ALL'];
  const mustEscalate = sc.privileged === true || (caps.add ?? []).some((cap) => SYS_ADMIN.has(cap.toUpperCase()));
  if (!mustEscalate) sc.allowPrivilegeEscalation ??= false;
}
