/**
 * Errors of the agentctl daemon. Every failure a request can hit becomes one `HttpError`, which the
 * HTTP layer turns into the protocol's `{"error":{"code","message"}}` body in one place.
 * @module
 */
import { ERROR_STATUS, type ErrorCode } from '../protocol/index.js';

/** Thrown by route handlers and helpers for any failure that maps to a protocol error code. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly status: number;
  /** For `spawn_failed`: the errno of the failed spawn, sent in the body's `errno` field. */
  readonly errno: string | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown; errno?: string },
  ) {
    super(message, options);
    this.status = ERROR_STATUS[code];
    this.errno = options?.errno;
  }
}

/** Type guard that survives duplicate module copies (checks the stable `name`). */
export function isHttpError(err: unknown): err is HttpError {
  return err instanceof Error && err.name === 'HttpError' && 'code' in err && 'status' in err;
}

/** Thrown by config parsing when an environment variable is malformed; `path` names the variable. */
export class ConfigFieldError extends Error {
  override readonly name = 'ConfigFieldError';

  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
  }
}
