/**
 * Refusing a WebSocket upgrade with a plain HTTP error response on the raw socket.
 * @module
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HttpError } from '../errors.js';
import { errorBody } from './respond.js';

export function rejectUpgrade(socket: Duplex, err: HttpError): void {
  const body = JSON.stringify(errorBody(err));
  socket.end(
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
