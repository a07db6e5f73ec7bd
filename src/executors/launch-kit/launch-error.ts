/**
 * The error a failed launch ends with: the stage it failed in, a machine-readable reason, and the
 * errors of its rollback riding along.
 * @module
 */
import { withRollbackErrors } from '../../shared/errors.js';

/** Thrown when a launch stage fails; `stage` is the failure site. Rollback errors ride along in `rollbackErrors`. */
export class LaunchError extends Error {
  override readonly name = 'LaunchError';
  rollbackErrors: unknown[] = [];
  constructor(
    readonly stage: string,
    readonly reason: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** True for a {@link LaunchError} (matched by name, so across module copies too). */
export function isLaunchError(err: unknown): err is LaunchError {
  return err instanceof Error && err.name === 'LaunchError' && typeof (err as LaunchError).stage === 'string';
}

/**
 * The launch's failure with the errors of its rollback attached: a LaunchError records them in its
 * `rollbackErrors` field, and every error gets them joined in by `withRollbackErrors` (message,
 * `cause`). Anything thrown that is not an Error is wrapped in one first.
 */
export function attachRollbackErrors(failure: unknown, errors: unknown[]): Error {
  const err = failure instanceof Error ? failure : new Error(String(failure));
  if (isLaunchError(err)) err.rollbackErrors = errors;
  return withRollbackErrors(err, errors);
}
