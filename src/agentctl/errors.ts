/**
 * Errors of the agentctl daemon. Every failure a request can hit becomes one `HttpError` (the
 * shared HTTP kit's) with a code of the protocol, which the HTTP layer turns into the protocol's
 * `{"error":{"code","message"}}` body in one place. Config errors are the shared `ConfigFieldError`.
 * @module
 */
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from '../protocol/index.js';
import { httpErrorFactory, isHttpError, type HttpError } from '../shared/http/index.js';

/** An HttpError with a protocol code, sent with the status the protocol gives that code. */
export const protocolError = httpErrorFactory<ErrorCode>(ERROR_STATUS);

/** Type guard for an HttpError with a protocol code (survives duplicate module copies). */
export function isProtocolError(err: unknown): err is HttpError<ErrorCode> {
  return isHttpError(err, ERROR_CODES);
}
