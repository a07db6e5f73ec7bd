/**
 * Reading and validating JSON request bodies: a byte cap, strict JSON, and zod messages that name
 * the offending field (`command: expected array, received string`).
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { LIMITS } from '../../protocol/index.js';
import { HttpError } from '../errors.js';

/**
 * A body past the cap is still drained (up to this many more bytes) so a client that writes the
 * whole body before reading reads a clean 413 instead of a reset connection; beyond that the
 * socket is destroyed.
 */
const DRAIN_SLACK = 64 * 1024 * 1024;

/** Reads the raw body; throws `body_too_large` past `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes: number = LIMITS.maxBodyBytes): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 'NaN');
    if (Number.isFinite(declared) && declared > maxBytes + DRAIN_SLACK) {
      // Not worth draining: answer now; the response closes the connection (see server.ts).
      reject(new HttpError('body_too_large', `request body of ${declared} bytes exceeds the limit of ${maxBytes} bytes`));
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
      if (total > maxBytes) {
        reject(new HttpError('body_too_large', `request body exceeds the limit of ${maxBytes} bytes`));
      } else {
        resolve(Buffer.concat(chunks, total));
      }
    });
    req.on('error', (err) => reject(new HttpError('bad_request', `reading request body: ${err.message}`, { cause: err })));
    req.on('close', () => {
      if (total > maxBytes) reject(new HttpError('body_too_large', `request body exceeds the limit of ${maxBytes} bytes`));
      else if (!req.complete) reject(new HttpError('bad_request', 'request body was cut off'));
    });
  });
}

/** Formats zod issues as `field.path: message; …`. */
export function formatZodError(error: z.ZodError): string {
  return error.issues
    .slice(0, 10)
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      return path === '' ? issue.message : `${path}: ${issue.message}`;
    })
    .join('; ');
}

/** Validates `value` against `schema`, throwing `bad_request` with field-named messages. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what = 'request body'): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new HttpError('bad_request', `invalid ${what}: ${formatZodError(result.error)}`);
  return result.data;
}

/** Reads, parses and validates a JSON body (any content type is accepted). An empty body counts as `{}`. */
export async function readJson<S extends z.ZodType>(req: IncomingMessage, schema: S, maxBytes: number = LIMITS.maxBodyBytes): Promise<z.output<S>> {
  const raw = await readBody(req, maxBytes);
  let value: unknown = {};
  if (raw.length > 0) {
    try {
      value = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new HttpError('bad_request', 'malformed JSON in request body');
    }
  }
  return parseWith(schema, value);
}
