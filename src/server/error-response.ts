/**
 * The server side of API errors: the one mapping from what a route or a service call threw to the
 * HttpError the API answers with (status + error envelope). Unexpected errors are sanitized before
 * they leave the process; the kit's own errors (404, 405, 413, a bad body …) pass as they are.
 * @module
 */
import { STATUS_OF, type ApiErrorCode, type ErrorBody } from '../api/index.js';
import { errorBody, HttpError, isHttpError } from '../shared/http/index.js';
import { sanitize } from '../shared/sanitize.js';

const API_ERROR_CODES = Object.keys(STATUS_OF) as ApiErrorCode[];

/** What agentctl's status becomes on the API (its request line, `agentctl POST …: status 400`, stays internal). */
function agentctlCode(status: unknown): ApiErrorCode {
  return status === 400 ? 'bad_request' : status === 404 ? 'not_found' : status === 409 ? 'conflict' : 'internal';
}

/** Maps anything thrown onto an API HttpError (names are matched so duplicate module copies work). */
export function toHttpError(err: unknown): HttpError<ApiErrorCode> {
  if (isHttpError(err, API_ERROR_CODES)) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  const fail = (code: ApiErrorCode, message: string, field?: unknown): HttpError<ApiErrorCode> =>
    new HttpError(code, message, { cause: err, ...(typeof field === 'string' ? { field } : {}) });
  switch (e.name) {
    case 'SessionNotFoundError':
    case 'PoolNotFoundError':
      return fail('not_found', e.message);
    case 'SessionStateError':
      return fail('conflict', e.message);
    case 'LaunchValidationError':
      return fail('bad_request', e.message, (e as { field?: unknown }).field);
    case 'ConfigFieldError':
      return fail('bad_request', e.message, (e as { path?: unknown }).path);
    case 'AgentctlHttpError': {
      // agentctl's own answer is the plain message
      const { status, serverMessage } = e as Error & { status?: unknown; serverMessage?: unknown };
      return fail(agentctlCode(status), sanitize(typeof serverMessage === 'string' && serverMessage !== '' ? serverMessage : e.message));
    }
    default:
      return fail('internal', sanitize(e.message || 'internal error'));
  }
}

/** The status and envelope the API answers `err` with (the `error` message of the streams too). */
export function toErrorResponse(err: unknown): { status: number; body: ErrorBody } {
  const e = toHttpError(err);
  return { status: e.status, body: errorBody(e) };
}
