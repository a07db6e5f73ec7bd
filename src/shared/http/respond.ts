/**
 * Writing JSON responses and error envelopes, on a response or on the raw socket of a refused
 * WebSocket upgrade. Messages are sent as the HttpError carries them: a server redacts (or not)
 * when it maps what was thrown to an HttpError.
 * @module
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HttpError } from './errors.js';

/** The body of every error response: `{"error":{"code","message"}}`, plus `field` or `errno` when the error has one. */
interface ErrorEnvelope<C extends string = string> {
  readonly error: { readonly code: C; readonly message: string; readonly field?: string; readonly errno?: string };
}

/** Sends `body` as JSON with `status` (never cached). */
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

/** The JSON body of an error response. */
export function errorBody<C extends string>(err: HttpError<C>): ErrorEnvelope<C> {
  return {
    error: {
      code: err.code,
      message: err.message,
      ...(err.field === undefined ? {} : { field: err.field }),
      ...(err.errno === undefined ? {} : { errno: err.errno }),
    },
  };
}

/** Sends an error response (unless headers were already sent: then the connection is dropped). */
export function sendError(res: ServerResponse, err: HttpError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, err.status, errorBody(err));
}

/** Refuses a WebSocket upgrade: a plain HTTP error response on the raw socket, then close. */
export function rejectUpgrade(socket: Duplex, err: HttpError): void {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(errorBody(err));
  socket.end(
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
