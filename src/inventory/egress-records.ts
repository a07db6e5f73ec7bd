/**
 * Egress rows (issue 23): a session's egress proxy credential (the sha256 of its token, never the
 * token) and the record of each connection through the proxy. Bounded: the latest
 * {@link EGRESS_RECORDS_KEPT} records of a session. The checks of what a caller hands over, the row
 * mapping (the same on both backends: integers, 0/1 for a flag) and the rules of the writes. No I/O.
 * @module
 */
import { InventoryCorruptError, InventoryDuplicateError } from './errors.js';
import type { EgressCredentialRecord, EgressRecordInput, EgressRecordRow, EgressSummary } from './inventory.js';

/** Records kept per session: the latest ones (older ones are deleted by the append that passes this). */
export const EGRESS_RECORDS_KEPT = 10_000;
const DEFAULT_LIST_LIMIT = 1000;
const MAX_LIST_LIMIT = 10_000;

/** The columns of `egress_records` but `seq`, in the order of {@link egressRecordValues}. */
export const EGRESS_RECORD_COLUMNS = 'session_id, host, port, method, allowed, reason, status, bytes_up, bytes_down, started_at, ended_at, broker, input_tokens, output_tokens';

/** A stored record; Postgres hands BIGINT columns back as strings. */
export interface EgressRecordDbRow {
  seq: number | string;
  session_id: string;
  host: string;
  port: number;
  method: string;
  allowed: number;
  reason: string | null;
  status: number | null;
  bytes_up: number | string;
  bytes_down: number | string;
  started_at: number | string;
  ended_at: number | string;
  broker: string | null;
  input_tokens: number | string | null;
  output_tokens: number | string | null;
}

/** A record to insert: the store assigns `seq`. */
type NewEgressDbRow = Omit<EgressRecordDbRow, 'seq'>;

export interface EgressCredentialDbRow {
  session_id: string;
  token_digest: string;
  policy: string;
  created_at: string;
}

/** The aggregate row of a session's records (SUM/COUNT/MAX; strings from Postgres, NULL sums when empty). */
export interface EgressSummaryDbRow {
  connections: number | string;
  denied: number | string | null;
  bytes_up: number | string | null;
  bytes_down: number | string | null;
  last_at: number | string | null;
  broker_requests: number | string | null;
  input_tokens: number | string | null;
  output_tokens: number | string | null;
}

/** The aggregate every backend runs over `egress_records WHERE session_id = <the session>`. */
export const EGRESS_SUMMARY_SELECT = `SELECT COUNT(*) AS connections, SUM(1 - allowed) AS denied, SUM(bytes_up) AS bytes_up, SUM(bytes_down) AS bytes_down,
  MAX(ended_at) AS last_at, SUM(CASE WHEN broker IS NULL THEN 0 ELSE 1 END) AS broker_requests,
  SUM(COALESCE(input_tokens, 0)) AS input_tokens, SUM(COALESCE(output_tokens, 0)) AS output_tokens FROM egress_records`;

function fail(what: string): never {
  throw new TypeError(`egress: ${what}`);
}

function checkId(sessionId: unknown): string {
  if (typeof sessionId !== 'string' || sessionId === '') fail('a session id must be a non-empty string');
  return sessionId;
}

function count(value: unknown, field: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > max) fail(`${field} must be an integer from 0 to ${max}, got ${String(value)}`);
  return value;
}

function orNull<T>(value: T | null | undefined, check: (v: T) => unknown): T | null {
  if (value === null || value === undefined) return null;
  check(value);
  return value;
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') fail(`${field} must be a non-empty string`);
  return value;
}

/** The credential to store, stamped now; TypeError for an empty id, a digest that is not sha256 hex or a policy that is not a string. */
export function egressCredentialRow(record: Omit<EgressCredentialRecord, 'createdAt'>, now: Date): EgressCredentialDbRow {
  const sessionId = checkId(record.sessionId);
  if (typeof record.tokenDigest !== 'string' || !/^[0-9a-f]{64}$/.test(record.tokenDigest)) fail('a token digest must be a sha256 in lowercase hex (64 digits)');
  if (typeof record.policy !== 'string') fail('a policy must be a string (JSON)');
  return { session_id: sessionId, token_digest: record.tokenDigest, policy: record.policy, created_at: now.toISOString() };
}

/** Throws InventoryDuplicateError when the digest of `row` is held by another session (`holder`). */
export function checkDigestHolder(holder: string | null, row: EgressCredentialDbRow): void {
  if (holder !== null && holder !== row.session_id) throw new InventoryDuplicateError(row.session_id, 'egress token digest');
}

export function egressCredentialFromRow(row: EgressCredentialDbRow): EgressCredentialRecord {
  return { sessionId: row.session_id, tokenDigest: row.token_digest, policy: row.policy, createdAt: row.created_at };
}

/** The stored form of one record (without its `seq`, which the store assigns); TypeError for a malformed one. */
function egressRecordRow(r: EgressRecordInput): NewEgressDbRow {
  if (typeof r.allowed !== 'boolean') fail('allowed must be a boolean');
  return {
    session_id: checkId(r.sessionId),
    host: text(r.host, 'host'),
    port: count(r.port, 'port', 65_535),
    method: text(r.method, 'method'),
    allowed: r.allowed ? 1 : 0,
    reason: orNull(r.reason, (v) => typeof v === 'string' || fail('reason must be a string or null')),
    status: orNull(r.status, (v) => count(v, 'status', 999)),
    bytes_up: count(r.bytesUp, 'bytesUp'),
    bytes_down: count(r.bytesDown, 'bytesDown'),
    started_at: count(r.startedAt, 'startedAt'),
    ended_at: count(r.endedAt, 'endedAt'),
    broker: orNull(r.broker, (v) => text(v, 'broker')),
    input_tokens: orNull(r.inputTokens, (v) => count(v, 'inputTokens')),
    output_tokens: orNull(r.outputTokens, (v) => count(v, 'outputTokens')),
  };
}

/** The values of a row in {@link EGRESS_RECORD_COLUMNS} order. */
export function egressRecordValues(r: NewEgressDbRow): unknown[] {
  return [r.session_id, r.host, r.port, r.method, r.allowed, r.reason, r.status, r.bytes_up, r.bytes_down, r.started_at, r.ended_at, r.broker, r.input_tokens, r.output_tokens];
}

/** The rows of a batch (all checked before anything is written) and the sessions they belong to. */
export function egressBatch(records: readonly EgressRecordInput[]): { rows: NewEgressDbRow[]; sessionIds: string[] } {
  if (!Array.isArray(records)) fail('records must be an array');
  const rows = records.map(egressRecordRow);
  return { rows, sessionIds: [...new Set(rows.map((r) => r.session_id))].sort() };
}

/** The `after` and `limit` of a listing, checked (TypeError), with their defaults. */
export function egressListBounds(sessionId: string, opts: { after?: number; limit?: number }): { after: number; limit: number } {
  checkId(sessionId);
  const after = count(opts.after ?? 0, 'after');
  const limit = count(opts.limit ?? DEFAULT_LIST_LIMIT, 'limit', MAX_LIST_LIMIT);
  if (limit === 0) fail('limit must be at least 1');
  return { after, limit };
}

/** A stored integer column as a number (InventoryCorruptError when it is not one). */
function int(value: number | string, column: string, key: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new InventoryCorruptError('egress_records', key, `${column}: not an integer`);
  return n;
}

function intOrNull(value: number | string | null, column: string, key: string): number | null {
  return value === null ? null : int(value, column, key);
}

export function egressRecordFromRow(row: EgressRecordDbRow): EgressRecordRow {
  const key = String(row.seq);
  return {
    seq: int(row.seq, 'seq', key),
    sessionId: row.session_id,
    host: row.host,
    port: int(row.port, 'port', key),
    method: row.method,
    allowed: int(row.allowed, 'allowed', key) !== 0,
    reason: row.reason,
    status: intOrNull(row.status, 'status', key),
    bytesUp: int(row.bytes_up, 'bytes_up', key),
    bytesDown: int(row.bytes_down, 'bytes_down', key),
    startedAt: int(row.started_at, 'started_at', key),
    endedAt: int(row.ended_at, 'ended_at', key),
    broker: row.broker,
    inputTokens: intOrNull(row.input_tokens, 'input_tokens', key),
    outputTokens: intOrNull(row.output_tokens, 'output_tokens', key),
  };
}

export function egressSummaryFromRow(row: EgressSummaryDbRow | undefined, sessionId: string): EgressSummary {
  const key = `summary of ${sessionId}`;
  const sum = (v: number | string | null | undefined, column: string): number => (v === null || v === undefined ? 0 : int(v, column, key));
  return {
    connections: sum(row?.connections, 'connections'),
    denied: sum(row?.denied, 'denied'),
    bytesUp: sum(row?.bytes_up, 'bytes_up'),
    bytesDown: sum(row?.bytes_down, 'bytes_down'),
    lastAt: row?.last_at === null || row?.last_at === undefined ? null : int(row.last_at, 'last_at', key),
    brokerRequests: sum(row?.broker_requests, 'broker_requests'),
    inputTokens: sum(row?.input_tokens, 'input_tokens'),
    outputTokens: sum(row?.output_tokens, 'output_tokens'),
  };
}
