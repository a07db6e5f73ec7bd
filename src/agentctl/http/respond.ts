/**
 * Writing JSON responses and turning any thrown value into the protocol error envelope.
 * @module
 */
import type { ServerResponse } from 'node:http';
import type { ErrorBody } from '../../protocol/index.js';
import { HttpError, isHttpError } from '../errors.js';
import { sanitize } from '../sanitize.js';

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

/** Maps anything thrown to an `HttpError`; unexpected errors become `internal` with a sanitized message. */
export function toHttpError(err: unknown): HttpError {
  if (isHttpError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new HttpError('internal', sanitize(`internal error: ${message}`), { cause: err });
}

/** The JSON body of an error response. */
export function errorBody(err: HttpError): ErrorBody {
  return { error: { code: err.code, message: sanitize(err.message) } };
}

/** Sends an error response (unless headers were already sent, in which case the socket is closed). */
export function sendError(res: ServerResponse, err: HttpError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, err.status, errorBody(err));
}
