/**
 * Security warnings about a profile's template (spec §3.4): settings that weaken the Pod's
 * isolation from its node. They are the user's choice, so they are reported (by `berth doctor` and
 * at launch), never stripped.
 * @module
 */
import type { V1Container, V1EphemeralContainer, V1PodSecurityContext, V1SecurityContext } from '@kubernetes/client-node';
import type { KubernetesProfile, TemplateWarning } from '../types.js';
import { field, item } from './paths.js';
import { parsePodTemplate } from './template.js';

const HOST_NAMESPACES = [
  ['hostNetwork', 'the Pod shares the node network namespace'],
  ['hostPID', 'the Pod shares the node process namespace'],
  ['hostIPC', 'the Pod shares the node IPC namespace'],
] as const;

/**
 * The warnings of a validated profile. `pathPrefix` is the template field
 * (`profiles.k8s.kubernetes.pod_template`); paths follow the document as written, so a PodTemplate's
 * findings are under `….template.spec`.
 */
export function templateWarnings(profile: KubernetesProfile, pathPrefix: string): TemplateWarning[] {
  // the root depends on the document kind, which only the text records
  const { root } = parsePodTemplate(profile.templateText, pathPrefix);
  const spec = profile.template.spec;
  if (spec === undefined) return [];
  const path = field(root, 'spec');
  const warnings: TemplateWarning[] = [];
  const warn = (at: string, message: string) => warnings.push({ path: at, message });

  if (spec.automountServiceAccountToken === true) warn(field(path, 'automountServiceAccountToken'), 'service account token automount is enabled');
  for (const [key, message] of HOST_NAMESPACES) if (spec[key] === true) warn(field(path, key), message);
  if (spec.shareProcessNamespace === true) warn(field(path, 'shareProcessNamespace'), 'the containers share one process namespace: each sees the processes (and their environment) of the others');
  podSecurityWarnings(spec.securityContext, field(path, 'securityContext'), warn);
  (spec.volumes ?? []).forEach((v, i) => {
    const at = item(field(path, 'volumes'), i);
    if (v.hostPath !== undefined) warn(field(at, 'hostPath'), 'a hostPath volume exposes a directory of the node');
    (v.projected?.sources ?? []).forEach((s, j) => {
      if (s.serviceAccountToken !== undefined) {
        warn(field(item(field(field(at, 'projected'), 'sources'), j), 'serviceAccountToken'), 'a projected volume mounts a service account token');
      }
    });
  });
  const lists: [string, (V1Container | V1EphemeralContainer)[] | undefined][] = [
    ['initContainers', spec.initContainers],
    ['containers', spec.containers],
    ['ephemeralContainers', spec.ephemeralContainers],
  ];
  for (const [name, containers] of lists) {
    (containers ?? []).forEach((c, i) => {
      const at = item(field(path, name), i);
      containerSecurityWarnings(c.securityContext, field(at, 'securityContext'), warn);
      (c.ports ?? []).forEach((p, j) => {
        if (p.hostPort !== undefined) warn(field(item(field(at, 'ports'), j), 'hostPort'), 'a hostPort opens a port on the node');
      });
    });
  }
  return warnings;
}

type Warn = (at: string, message: string) => void;

/** `runAsUser: 0` and `seccompProfile: Unconfined` of the Pod's securityContext (they apply to every container). */
function podSecurityWarnings(sc: V1PodSecurityContext | undefined, at: string, warn: Warn): void {
  if (sc === undefined) return;
  if (sc.runAsUser === 0) warn(field(at, 'runAsUser'), 'the containers run as root (uid 0) unless they set their own user');
  if (sc.seccompProfile?.type === 'Unconfined') warn(field(field(at, 'seccompProfile'), 'type'), 'seccomp is off (Unconfined): every system call is allowed');
}

/** What one container's securityContext gives up; the path names the container by its index. */
function containerSecurityWarnings(sc: V1SecurityContext | undefined, at: string, warn: Warn): void {
  if (sc === undefined) return;
  if (sc.privileged === true) warn(field(at, 'privileged'), 'the container runs privileged');
  const added = sc.capabilities?.add ?? [];
  if (added.length > 0) warn(field(field(at, 'capabilities'), 'add'), `the container adds Linux capabilities [${added.join(', ')}]`);
  if (sc.allowPrivilegeEscalation === true) warn(field(at, 'allowPrivilegeEscalation'), 'a process of the container may gain more privileges than its parent (setuid binaries)');
  if (sc.runAsUser === 0) warn(field(at, 'runAsUser'), 'the container runs as root (uid 0)');
  if (sc.seccompProfile?.type === 'Unconfined') warn(field(field(at, 'seccompProfile'), 'type'), 'seccomp is off (Unconfined): every system call is allowed');
  if (sc.procMount === 'Unmasked') warn(field(at, 'procMount'), '/proc is mounted unmasked: the paths the runtime hides or makes read-only under /proc are open');
}

/** The reason of the launch event that carries a profile's warnings. */
export const SECURITY_WARNING_REASON = 'SecurityWarning';

/** One line for a launch event (null when there is nothing to say): `N security warning(s) …: path: message; …`. */
export function describeTemplateWarnings(warnings: readonly TemplateWarning[]): string | null {
  if (warnings.length === 0) return null;
  const list = warnings.map((w) => `${w.path}: ${w.message}`).join('; ');
  return `${warnings.length} security warning${warnings.length === 1 ? '' : 's'} about the Pod template (allowed, not changed; berth doctor lists them): ${list}`;
}
