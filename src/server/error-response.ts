/**
 * The server side of API errors: HttpError for errors the server raises itself, and the one
 * mapping from what a service call threw to HTTP status + error envelope (unexpected errors are
 * sanitized before they leave the process).
 * @module
 */
import { sanitize } from '../shared/sanitize.js';
import { STATUS_OF } from '../api/errors.js';
import type { ApiErrorCode, ErrorBody } from '../api/schemas.js';

/** An error the server answers with a chosen status and code (like Hono's HTTPException). */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
  get status(): number {
    return STATUS_OF[this.code];
  }
}

/** Maps what a service call threw onto status + envelope (names are matched so duplicate module copies work). */
export function toErrorResponse(err: unknown): { status: number; body: ErrorBody } {
  const e = err instanceof Error ? err : new Error(String(err));
  const body = (code: ApiErrorCode, message: string, field?: string): { status: number; body: ErrorBody } => ({
    status: STATUS_OF[code],
    body: { error: field === undefined ? { code, message } : { code, message, field } },
  });
  if (e instanceof HttpError) return body(e.code, e.message, e.field);
  switch (e.name) {
    case 'SessionNotFoundError':
      return body('not_found', e.message);
    case 'SessionStateError':
      return body('conflict', e.message);
    case 'LaunchValidationError': {
      const field = (e as { field?: unknown }).field;
      return body('bad_request', e.message, typeof field === 'string' ? field : undefined);
    }
    case 'ConfigFieldError': {
      const path = (e as { path?: unknown }).path;
      return body('bad_request', e.message, typeof path === 'string' ? path : undefined);
    }
    case 'AgentctlHttpError': {
      // agentctl's own answer is the plain message; the request line (`agentctl POST …: status 400`) is internal
      const { status, serverMessage } = e as Error & { status?: unknown; serverMessage?: unknown };
      const code: ApiErrorCode = status === 400 ? 'bad_request' : status === 404 ? 'not_found' : status === 409 ? 'conflict' : 'internal';
      return body(code, sanitize(typeof serverMessage === 'string' && serverMessage !== '' ? serverMessage : e.message));
    }
    default:
      return body('internal', sanitize(e.message || 'internal error'));
  }
}
