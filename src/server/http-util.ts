/**
 * Small node:http helpers for the API server: JSON bodies with a size cap, JSON replies,
 * error envelopes, and the bearer-token check.
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { z } from 'zod';
import type { OutputChunkView } from '../controller/service.js';
import { HttpError, toErrorResponse } from './error-response.js';
import type { OutputChunkWire } from '../api/schemas.js';

/** Reads and parses a JSON body, then decodes it with `schema`; 400 naming the field on failure. */
export async function readJson<S extends z.ZodType>(req: IncomingMessage, schema: S, maxBytes: number): Promise<z.infer<S>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpError('bad_request', `request body larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
  } catch {
    throw new HttpError('bad_request', 'malformed JSON in request body');
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : undefined;
    const message = issue ? `${field ?? 'body'}: ${issue.message}` : 'invalid request body';
    throw new HttpError('bad_request', message, field);
  }
  return parsed.data;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, err: unknown): { status: number; message: string } {
  const { status, body } = toErrorResponse(err);
  if (res.headersSent) {
    res.destroy();
  } else {
    sendJson(res, status, body);
  }
  return { status, message: body.error.message };
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * Constant-time token comparison. Both sides are hashed first so the comparison length does not
 * depend on (and does not leak) the expected token's length.
 */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  return timingSafeEqual(digest(presented), digest(expected));
}

/** The token from `Authorization: Bearer …`, if any. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/** Parses a boolean query flag: absent → false; `true`/`1`/empty → true; `false`/`0` → false. */
export function queryFlag(url: URL, name: string): boolean {
  const v = url.searchParams.get(name);
  if (v === null) return false;
  if (v === '' || v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new HttpError('bad_request', `${name}: must be true or false`, name);
}

/** Parses a non-negative integer query parameter. */
export function queryInt(url: URL, name: string): number | undefined {
  const v = url.searchParams.get(name);
  if (v === null) return undefined;
  if (!/^\d{1,15}$/.test(v)) throw new HttpError('bad_request', `${name}: must be a non-negative integer`, name);
  return Number(v);
}

/** A service output chunk on the wire (bytes as base64). */
export const toWire = (c: OutputChunkView): OutputChunkWire => ({
  seq: c.seq,
  stream: c.stream,
  data: Buffer.from(c.data).toString('base64'),
});
