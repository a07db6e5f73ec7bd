/**
 * Who a Pod or PVC belongs to (spec §3.3, Berth's names): the identity, the ownership labels built
 * from it, and the check that an object found in the cluster carries exactly those labels.
 * @module
 */
import { BERTH_KEY_PREFIX, LABEL, LABEL_VALUE, RESERVED_APP_LABELS } from '../constants.js';
import { ComposeFieldError } from './errors.js';
import { isLabelValue } from './validate.js';

/** The identity stamped on every object of a session. */
export interface ResourceIdentity {
  instanceId: string;
  sessionId: string;
  /** Name of the executor entry in berth.yaml. */
  executor: string;
  /** Name of the profile the session launched with. */
  profile: string;
}

const FIELD: Record<keyof ResourceIdentity, string> = {
  instanceId: 'identity.instance_id',
  sessionId: 'identity.session_id',
  executor: 'identity.executor',
  profile: 'identity.profile',
};

/** Throws a {@link ComposeFieldError} at `identity.<field>` unless every value is a label value. */
export function validateIdentity(identity: ResourceIdentity): void {
  for (const key of Object.keys(FIELD) as (keyof ResourceIdentity)[]) {
    const value = identity[key];
    if (typeof value !== 'string' || !isLabelValue(value)) {
      throw new ComposeFieldError(FIELD[key], 'must be a non-empty Kubernetes label value (at most 63 characters: alphanumerics, "-", "_", ".", alphanumeric at both ends)');
    }
  }
}

/** The ownership labels of a session's Pod and managed PVC. Validates the identity first. */
export function ownershipLabels(identity: ResourceIdentity): Record<string, string> {
  validateIdentity(identity);
  return {
    [LABEL.name]: LABEL_VALUE.name,
    [LABEL.component]: LABEL_VALUE.component,
    [LABEL.managedBy]: LABEL_VALUE.managedBy,
    [LABEL.instance]: identity.instanceId,
    [LABEL.instanceId]: identity.instanceId,
    [LABEL.sessionId]: identity.sessionId,
    [LABEL.executor]: identity.executor,
    [LABEL.profile]: identity.profile,
  };
}

/** A label key Berth owns: the four `app.kubernetes.io/*` ownership keys and anything under `berth.dev/`. */
function isOwnedLabelKey(key: string): boolean {
  return RESERVED_APP_LABELS.includes(key) || key.startsWith(BERTH_KEY_PREFIX);
}

/**
 * The differences between the owned labels of `actual` and `expected`: an expected owned key missing
 * or with another value, or an owned key `expected` does not have (a forged `berth.dev/x`).
 * Labels Berth does not own are ignored. Values are never echoed (they are compared, not shown).
 */
export function ownershipLabelProblems(actual: Readonly<Record<string, string>> | undefined, expected: Readonly<Record<string, string>>): string[] {
  const have = actual ?? {};
  const problems: string[] = [];
  for (const [key, value] of Object.entries(expected)) {
    if (isOwnedLabelKey(key) && have[key] !== value) problems.push(`ownership label "${key}" changed`);
  }
  for (const key of Object.keys(have)) {
    if (isOwnedLabelKey(key) && !(key in expected)) problems.push(`added ownership label "${key}"`);
  }
  return problems;
}

/** Thrown by {@link validateOwnershipLabels}: an object is not (or no longer) provably Berth's. */
export class OwnershipMismatchError extends Error {
  override readonly name = 'OwnershipMismatchError';
  constructor(readonly problems: readonly string[]) {
    super(problems.join('; '));
  }
}

/** Throws an {@link OwnershipMismatchError} unless the owned labels of `actual` are exactly `expected`'s. */
export function validateOwnershipLabels(actual: Readonly<Record<string, string>> | undefined, expected: Readonly<Record<string, string>>): void {
  const problems = ownershipLabelProblems(actual, expected);
  if (problems.length > 0) throw new OwnershipMismatchError(problems);
}
