/**
 * Mirrored output rows: the agent output of a session whose executor cannot read it while the
 * session is stopped (Kubernetes: it lives on the session's volume, served by agentctl only while
 * the Pod runs), copied to the inventory at stop or suspension. Bounded: the last `maxBytes` of a
 * run, the latest {@link RECORDED_RUNS_KEPT} runs of a session; the workspace keeps the full record.
 * The record, its row mapping (the same on both backends) and the pure rules of its writes. No I/O.
 * @module
 */
import { z } from 'zod';
import { decode } from './records.js';

/** The bytes of one run a mirror keeps by default (its last MiB). */
export const DEFAULT_RECORDED_OUTPUT_BYTES = 1024 * 1024;
/** The most a caller may ask a run to keep. */
const MAX_RECORDED_OUTPUT_BYTES = 16 * 1024 * 1024;
/** Runs mirrored per session: the latest write and the one before (`logs` and `logs --previous`). */
export const RECORDED_RUNS_KEPT = 2;

/** One chunk of output as a caller hands it over: `data` raw bytes, or their base64 (as agentctl sends them). */
export interface RecordedOutputInput {
  seq: number;
  stream: 'stdout' | 'stderr';
  data: Uint8Array | string;
}

/** One mirrored chunk as read back (structurally the executors' `RecordedOutputChunk`). */
export interface RecordedOutputRecord {
  seq: number;
  stream: 'stdout' | 'stderr';
  data: Uint8Array;
}

export interface RecordedOutputOptions {
  /** The bytes of the run to keep, its last ones. @default DEFAULT_RECORDED_OUTPUT_BYTES (1 MiB) */
  maxBytes?: number;
}

/** The stored form of one run's record: the chunks as JSON (base64 data), the byte count of their data. */
export interface RecordedOutputRow {
  session_id: string;
  process_id: string;
  bytes: number;
  chunks: string;
  updated_at: string;
}

const StoredChunksSchema = z.array(z.object({ seq: z.number().int().nonnegative(), stream: z.enum(['stdout', 'stderr']), data: z.string() }));

function bytesOf(data: Uint8Array | string): Buffer {
  return typeof data === 'string' ? Buffer.from(data, 'base64') : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * The row for one run: the chunks in sequence order, only their last `maxBytes` of data (whole
 * chunks dropped from the front; a last chunk larger than the bound keeps its tail). Throws a
 * TypeError for an id, a bound or a chunk that cannot be stored.
 */
export function recordedOutputRow(sessionId: string, processId: string, chunks: readonly RecordedOutputInput[], opts: RecordedOutputOptions, now: Date): RecordedOutputRow {
  if (sessionId === '' || processId === '') throw new TypeError('recorded output: the session and process ids must not be empty');
  const maxBytes = opts.maxBytes ?? DEFAULT_RECORDED_OUTPUT_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_RECORDED_OUTPUT_BYTES) {
    throw new TypeError(`recorded output: maxBytes must be an integer from 1 to ${MAX_RECORDED_OUTPUT_BYTES}, got ${maxBytes}`);
  }
  const sorted = [...chunks].sort((a, b) => a.seq - b.seq);
  const kept: { seq: number; stream: 'stdout' | 'stderr'; data: Buffer }[] = [];
  let bytes = 0;
  for (let i = sorted.length - 1; i >= 0 && bytes < maxBytes; i--) {
    const c = sorted[i] as RecordedOutputInput;
    if (!Number.isInteger(c.seq) || c.seq < 0) throw new TypeError(`recorded output: chunk sequence numbers are non-negative integers, got ${c.seq}`);
    if (c.stream !== 'stdout' && c.stream !== 'stderr') throw new TypeError(`recorded output: unknown stream '${String(c.stream)}'`);
    if (kept[0]?.seq === c.seq) continue; // a repeated chunk counts once
    const data = bytesOf(c.data);
    const room = maxBytes - bytes;
    kept.unshift({ seq: c.seq, stream: c.stream, data: data.length > room ? data.subarray(data.length - room) : data });
    bytes += Math.min(data.length, room);
  }
  const stored = kept.map((c) => ({ seq: c.seq, stream: c.stream, data: c.data.toString('base64') }));
  return { session_id: sessionId, process_id: processId, bytes, chunks: JSON.stringify(stored), updated_at: now.toISOString() };
}

/** The chunks of a stored run from sequence `from` on. */
export function recordedOutputFromRow(row: Pick<RecordedOutputRow, 'session_id' | 'process_id' | 'chunks'>, from: number): RecordedOutputRecord[] {
  const chunks = decode(StoredChunksSchema, row.chunks, 'recorded_output', `${row.session_id}/${row.process_id}`, 'chunks');
  return chunks.filter((c) => c.seq >= from).map((c) => ({ seq: c.seq, stream: c.stream, data: new Uint8Array(Buffer.from(c.data, 'base64')) }));
}
