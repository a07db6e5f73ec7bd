/**
 * What agentctl answers for whatever a request threw: the protocol error code (file-system errors
 * a caller can cause included), with a sanitized message.
 * @module
 */
import type { ErrorCode } from '../../protocol/index.js';
import { HttpError, isHttpError } from '../../shared/http/index.js';
import { sanitize } from '../../shared/sanitize.js';
import { protocolError } from '../errors.js';

/**
 * File-system errors a caller can cause with a legal request (a file where a directory is
 * expected, a read-only directory, ...). They are the caller's to fix, so they get a 4xx code
 * instead of `internal`; anything else (EIO, ENOSPC, ...) stays a 500.
 */
const ERRNO_CODES: Readonly<Record<string, ErrorCode>> = {
  ENOENT: 'not_found',
  ENOTDIR: 'not_a_directory',
  EISDIR: 'not_a_file',
  EEXIST: 'conflict',
  ENOTEMPTY: 'conflict',
  EACCES: 'forbidden',
  EPERM: 'forbidden',
  EROFS: 'forbidden',
  ENAMETOOLONG: 'bad_request',
  ELOOP: 'bad_request',
};

function errnoCode(err: unknown): ErrorCode | undefined {
  if (!(err instanceof Error) || typeof (err as NodeJS.ErrnoException).syscall !== 'string') return undefined;
  const code = (err as NodeJS.ErrnoException).code;
  return code === undefined ? undefined : ERRNO_CODES[code];
}

/**
 * Maps anything thrown to the `HttpError` agentctl answers with, its message sanitized: a
 * file-system error a caller can cause gets its 4xx code, anything unexpected is `internal`.
 */
export function toHttpError(err: unknown): HttpError {
  if (isHttpError(err)) {
    const message = sanitize(err.message);
    if (message === err.message) return err;
    return new HttpError(err.code, message, { status: err.status, cause: err, field: err.field, errno: err.errno });
  }
  const mapped = errnoCode(err);
  if (mapped !== undefined) return protocolError(mapped, sanitize((err as Error).message), { cause: err });
  const message = err instanceof Error ? err.message : String(err);
  return protocolError('internal', sanitize(`internal error: ${message}`), { cause: err });
}
