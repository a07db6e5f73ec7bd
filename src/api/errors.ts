/**
 * Errors of the Berth HTTP API as the typed client sees them, and the status of each error code.
 * No Node APIs here (the server-side mapping is in `error-response.ts`).
 * @module
 */
import type { ApiErrorCode } from './schemas.js';

/** Thrown by the client for any non-2xx response (or an `error` message inside a stream). */
export class BerthApiError extends Error {
  override readonly name = 'BerthApiError';
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** Thrown by the client when the server cannot be reached at all (not running, wrong port). */
export class ControllerUnreachableError extends Error {
  override readonly name = 'ControllerUnreachableError';
  constructor(
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot reach the berth controller at ${url}`, options);
  }
}

/**
 * Thrown by the client when a stream (events, logs, exec output, a shell) breaks off before its
 * end: the controller died, restarted or closed the connection. What the stream was doing on the
 * other side (a command, a shell) is then in an unknown state.
 */
export class StreamBrokenError extends Error {
  override readonly name = 'StreamBrokenError';
  constructor(detail: string, options?: { cause?: unknown }) {
    super(`the connection to the berth controller broke off (${detail})`, options);
  }
}

export const STATUS_OF: Record<ApiErrorCode, number> = {
  bad_request: 400,
  body_too_large: 413,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  not_implemented: 501,
  internal: 500,
};
