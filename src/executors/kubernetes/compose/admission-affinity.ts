/**
 * Node-affinity checks of the admitted Pod (spec §4.4): a webhook may add placement rules, but none
 * that contradicts the platform Berth selected (`kubernetes.io/os`, `kubernetes.io/arch`).
 * @module
 */
import type { V1Affinity, V1NodeSelectorRequirement, V1NodeSelectorTerm } from '@kubernetes/client-node';
import { sameObject } from './canonical.js';

const PLATFORM_KEYS = ['kubernetes.io/os', 'kubernetes.io/arch'] as const;

interface Located {
  path: string;
  requirement: V1NodeSelectorRequirement;
  field: boolean;
}

function platformRequirements(affinity: V1Affinity | undefined): Located[] {
  const node = affinity?.nodeAffinity;
  const out: Located[] = [];
  const collect = (term: V1NodeSelectorTerm | undefined, base: string): void => {
    (term?.matchExpressions ?? []).forEach((r, i) => out.push({ path: `${base}.matchExpressions[${i}]`, requirement: r, field: false }));
    (term?.matchFields ?? []).forEach((r, i) => out.push({ path: `${base}.matchFields[${i}]`, requirement: r, field: true }));
  };
  const required = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms';
  (node?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []).forEach((t, i) => collect(t, `${required}[${i}]`));
  const preferred = 'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution';
  (node?.preferredDuringSchedulingIgnoredDuringExecution ?? []).forEach((p, i) => collect(p.preference, `${preferred}[${i}].preference`));
  return out.filter((l) => (PLATFORM_KEYS as readonly string[]).includes(l.requirement.key));
}

function section(path: string): string {
  return path.includes('.required') ? 'required' : 'preferred';
}

/** Whether an added requirement still admits the selected value. DoesNotExist, Gt and Lt never do. */
function compatible(req: V1NodeSelectorRequirement, selected: string): boolean {
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return values.includes(selected);
    case 'NotIn':
      return !values.includes(selected);
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/**
 * Findings about platform affinity: every platform requirement of `desired` (from the template) is
 * still there, and each one `actual` adds is a matchExpression compatible with the selection.
 */
export function platformAffinityProblems(desired: V1Affinity | undefined, actual: V1Affinity | undefined, selected: { os: string; arch: string }): string[] {
  const want = platformRequirements(desired);
  const have = platformRequirements(actual);
  const problems: string[] = [];
  for (const w of want) {
    if (!have.some((h) => section(h.path) === section(w.path) && h.field === w.field && sameObject(h.requirement, w.requirement))) {
      problems.push(`admitted Pod removed the platform node affinity at ${w.path}`);
    }
  }
  for (const h of have) {
    if (want.some((w) => section(h.path) === section(w.path) && h.field === w.field && sameObject(h.requirement, w.requirement))) continue;
    const value = h.requirement.key === 'kubernetes.io/os' ? selected.os : selected.arch;
    if (h.field || !compatible(h.requirement, value)) problems.push(`admitted Pod added conflicting platform node affinity at ${h.path}`);
  }
  return problems;
}
