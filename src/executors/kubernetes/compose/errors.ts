/**
 * Errors of the pure composition layer: bad input to a composer, and an admitted object that no
 * longer matches what Berth asked for.
 * @module
 */

/** Thrown when a composer gets invalid input; `path` names the field (`identity.session_id`, `pod.metadata.name`). */
export class ComposeFieldError extends Error {
  override readonly name = 'ComposeFieldError';
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

/**
 * Thrown when the API server (a mutating webhook, a defaulting plugin) changed something Berth owns.
 * `problems` lists every finding; the message joins them. Findings name fields, never values.
 */
export class AdmissionError extends Error {
  override readonly name = 'AdmissionError';
  constructor(
    readonly kind: 'Pod' | 'PVC',
    readonly problems: readonly string[],
  ) {
    super(problems.join('; '));
  }
}
