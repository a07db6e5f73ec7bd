/**
 * Writing JSON responses and turning any thrown value into the protocol error envelope.
 * @module
 */
import type { ServerResponse } from 'node:http';
import type { ErrorBody, ErrorCode } from '../../protocol/index.js';
import { HttpError, isHttpError } from '../errors.js';
import { sanitize } from '../../shared/sanitize.js';

/** Sends `body` as JSON with `status`. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

/** Sends 204 No Content. */
export function sendNoContent(res: ServerResponse): void {
  res.writeHead(204);
  res.end();
}

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

/** Maps anything thrown to an `HttpError`; unexpected errors become `internal` with a sanitized message. */
export function toHttpError(err: unknown): HttpError {
  if (isHttpError(err)) return err;
  const mapped = errnoCode(err);
  if (mapped !== undefined) return new HttpError(mapped, sanitize((err as Error).message), { cause: err });
  const message = err instanceof Error ? err.message : String(err);
  return new HttpError('internal', sanitize(`internal error: ${message}`), { cause: err });
}

/** The JSON body of an error response. */
export function errorBody(err: HttpError): ErrorBody {
  const message = sanitize(err.message);
  return { error: err.errno === undefined ? { code: err.code, message } : { code: err.code, message, errno: err.errno } };
}

/** Sends an error response (unless headers were already sent, in which case the socket is closed). */
export function sendError(res: ServerResponse, err: HttpError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, err.status, errorBody(err));
}
