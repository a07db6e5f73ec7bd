/**
 * Security warnings about a profile's template (spec §3.4): settings that weaken the Pod's
 * isolation from its node. They are the user's choice, so they are reported (by `berth doctor` and
 * at launch), never stripped.
 * @module
 */
import type { V1Container, V1EphemeralContainer } from '@kubernetes/client-node';
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
  (spec.volumes ?? []).forEach((v, i) => {
    if (v.hostPath !== undefined) warn(field(item(field(path, 'volumes'), i), 'hostPath'), 'a hostPath volume exposes a directory of the node');
  });
  const lists: [string, (V1Container | V1EphemeralContainer)[] | undefined][] = [
    ['initContainers', spec.initContainers],
    ['containers', spec.containers],
    ['ephemeralContainers', spec.ephemeralContainers],
  ];
  for (const [name, containers] of lists) {
    (containers ?? []).forEach((c, i) => {
      const at = item(field(path, name), i);
      if (c.securityContext?.privileged === true) warn(field(field(at, 'securityContext'), 'privileged'), 'the container runs privileged');
      (c.ports ?? []).forEach((p, j) => {
        if (p.hostPort !== undefined) warn(field(item(field(at, 'ports'), j), 'hostPort'), 'a hostPort opens a port on the node');
      });
    });
  }
  return warnings;
}

/** The reason of the launch event that carries a profile's warnings. */
export const SECURITY_WARNING_REASON = 'SecurityWarning';

/** One line for a launch event (null when there is nothing to say): `N security warning(s) …: path: message; …`. */
export function describeTemplateWarnings(warnings: readonly TemplateWarning[]): string | null {
  if (warnings.length === 0) return null;
  const list = warnings.map((w) => `${w.path}: ${w.message}`).join('; ');
  return `${warnings.length} security warning${warnings.length === 1 ? '' : 's'} about the Pod template (allowed, not changed; berth doctor lists them): ${list}`;
}
