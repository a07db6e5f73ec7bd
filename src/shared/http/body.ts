/**
 * Reading JSON request bodies: a byte cap (413 `body_too_large` past it), strict JSON (400), and
 * zod messages that name the offending field (`command: expected array, received string`, with
 * the first field also in the error's `field`). An empty body is JSON `null`: every request schema
 * wants an object, so a missing body is refused like any other non-object.
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { HttpError } from './errors.js';

/**
 * A body past the cap is still drained (up to this many more bytes) so a client that writes the
 * whole body before reading reads a clean 413 instead of a reset connection; beyond that the
 * socket is destroyed. The error response closes the connection (see `createRequestListener`).
 */
const DRAIN_SLACK = 64 * 1024 * 1024;

/** At most this many zod issues are named in one message. */
const MAX_ISSUES = 10;

const tooLarge = (maxBytes: number, declared?: number): HttpError =>
  new HttpError('body_too_large', `request body ${declared === undefined ? '' : `of ${declared} bytes `}exceeds the limit of ${maxBytes} bytes`);

/** Reads the raw body; throws `body_too_large` past `maxBytes` and `bad_request` for a body cut off. */
function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 'NaN');
    if (Number.isFinite(declared) && declared > maxBytes + DRAIN_SLACK) {
      // Not worth draining: answer now.
      reject(tooLarge(maxBytes, declared));
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    req.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total <= maxBytes) chunks.push(chunk);
      else if (total > maxBytes + DRAIN_SLACK) req.destroy();
    });
    req.on('end', () => {
      if (total > maxBytes) reject(tooLarge(maxBytes));
      else resolve(Buffer.concat(chunks, total));
    });
    req.on('error', (err) => reject(new HttpError('bad_request', `reading request body: ${err.message}`, { cause: err })));
    req.on('close', () => {
      if (total > maxBytes) reject(tooLarge(maxBytes));
      else if (!req.complete) reject(new HttpError('bad_request', 'request body was cut off'));
    });
  });
}

/** Formats zod issues as `field.path: message; …` (`what` stands for the root). */
function formatZodError(error: z.ZodError, what = 'body'): string {
  return error.issues
    .slice(0, MAX_ISSUES)
    .map((issue) => `${issue.path.length === 0 ? what : issue.path.map(String).join('.')}: ${issue.message}`)
    .join('; ');
}

/** Validates `value` against `schema`: `bad_request` naming every field (and the first in `field`). */
function parseWith<S extends z.ZodType>(schema: S, value: unknown, what = 'body'): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const first = result.error.issues.find((issue) => issue.path.length > 0);
  const field = first?.path.map(String).join('.');
  throw new HttpError('bad_request', formatZodError(result.error, what), field === undefined ? {} : { field });
}

/** Reads, parses and validates a JSON body (any content type is accepted; an empty body is `null`). */
export async function readJson<S extends z.ZodType>(req: IncomingMessage, schema: S, maxBytes: number): Promise<z.output<S>> {
  const raw = await readBody(req, maxBytes);
  let value: unknown = null;
  if (raw.length > 0) {
    try {
      value = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new HttpError('bad_request', 'malformed JSON in request body');
    }
  }
  return parseWith(schema, value);
}
