/**
 * Permission decisions for ACP agents, pure: what the `approve` policy answers by itself, and which
 * of a request's options an allow/deny answer picks.
 * @module
 */
import type { ApprovePolicy } from '../../protocol/index.js';

/** A permission option as ACP offers it (PermissionOption). */
interface PermissionOptionLike {
  readonly optionId: string;
  readonly kind: string;
}

/** Tool kinds `auto-edits` allows without asking (ACP ToolKind). */
const AUTO_EDIT_KINDS = new Set(['edit', 'read']);

/**
 * The option the policy picks for a tool call of `toolKind`, or null when a person must answer.
 * The policy only ever allows: a request it does not cover waits (`ask` covers nothing).
 */
export function policyChoice(policy: ApprovePolicy, toolKind: string | null | undefined, options: readonly PermissionOptionLike[]): string | null {
  const covered = policy === 'auto-all' || (policy === 'auto-edits' && toolKind != null && AUTO_EDIT_KINDS.has(toolKind));
  return covered ? chooseOption(options, 'allow', false) : null;
}

/**
 * The option an answer picks: allow → allow_once (allow_always with `always`), deny → reject_once
 * (reject_always with `always`), falling back to the other option of the same side when only it is
 * offered; null when the request offers no option of that side.
 */
export function chooseOption(options: readonly PermissionOptionLike[], decision: 'allow' | 'deny', always: boolean): string | null {
  const side = decision === 'allow' ? 'allow' : 'reject';
  const preferred = [`${side}_${always ? 'always' : 'once'}`, `${side}_${always ? 'once' : 'always'}`];
  for (const kind of preferred) {
    const option = options.find((o) => o.kind === kind);
    if (option !== undefined) return option.optionId;
  }
  return null;
}
