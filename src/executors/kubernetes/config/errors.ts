/**
 * Errors of the Kubernetes configuration. Field errors are the shared
 * `ConfigFieldError` (dotted path + "must …" detail), so `berth.yaml` problems read the same
 * whichever executor they concern.
 * @module
 */
/** Thrown when a recorded profile snapshot cannot be decoded or no longer validates. */
export class ProfileSnapshotError extends Error {
  override readonly name = 'ProfileSnapshotError';
  constructor(
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`kubernetes profile snapshot: ${detail}`, options);
  }
}
