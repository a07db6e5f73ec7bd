/**
 * Small helpers of the API's routes: query parameters with errors that name them, and output
 * chunks on the wire.
 * @module
 */
import type { OutputChunkWire } from '../api/index.js';
import type { OutputChunkView } from '../controller/index.js';
import { HttpError } from '../shared/http/index.js';

/** Parses a boolean query flag: absent → false; `true`/`1`/empty → true; `false`/`0` → false. */
export function queryFlag(url: URL, name: string): boolean {
  const v = url.searchParams.get(name);
  if (v === null) return false;
  if (v === '' || v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new HttpError('bad_request', `${name}: must be true or false`, { field: name });
}

/** Parses a non-negative integer query parameter. */
export function queryInt(url: URL, name: string): number | undefined {
  const v = url.searchParams.get(name);
  if (v === null) return undefined;
  if (!/^\d{1,15}$/.test(v)) throw new HttpError('bad_request', `${name}: must be a non-negative integer`, { field: name });
  return Number(v);
}

/** A service output chunk on the wire (bytes as base64). */
export const toWire = (c: OutputChunkView): OutputChunkWire => ({
  seq: c.seq,
  stream: c.stream,
  data: Buffer.from(c.data).toString('base64'),
});
