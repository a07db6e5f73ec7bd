/**
 * The egress rows of the Postgres inventory (egress-records.ts checks and maps them). A write checks
 * its input (and stamps it) when called and returns the work for the store's fenced transaction, so a
 * retried attempt writes exactly what a lost first attempt may have committed. Appends lock their
 * sessions' rows: appends of one session take turns, so its `seq` order is its commit order (a
 * reader paging by `after` misses nothing). Each append's rows carry its id (`batch_id`), so a
 * retried append whose first attempt committed writes nothing twice.
 * @module
 */
import { randomUUID } from 'node:crypto';
import {
  checkDigestHolder,
  EGRESS_RECORD_COLUMNS,
  EGRESS_RECORDS_KEPT,
  EGRESS_SUMMARY_SELECT,
  egressBatch,
  egressCredentialFromRow,
  egressCredentialRow,
  egressListBounds,
  egressRecordFromRow,
  egressRecordValues,
  egressSummaryFromRow,
  type EgressCredentialDbRow,
  type EgressRecordDbRow,
  type EgressSummaryDbRow,
} from '../egress-records.js';
import type { EgressCredentialRecord, EgressRecordInput, EgressRecordRow, EgressSummary } from '../inventory.js';
import type { Query } from './runner.js';

type Work<T> = (q: Query) => Promise<T>;

/** The array type of each of EGRESS_RECORD_COLUMNS, for one `unnest` of the whole batch. */
const COLUMN_TYPES = ['text', 'text', 'integer', 'text', 'integer', 'text', 'integer', 'bigint', 'bigint', 'bigint', 'bigint', 'text', 'bigint', 'bigint'];
const UNNEST_ARGS = COLUMN_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ');

/** Stores a session's credential over its previous one (the session row is the lock); false when the session does not exist. */
export function writeCredential(record: Omit<EgressCredentialRecord, 'createdAt'>, now: Date): Work<boolean> {
  const row = egressCredentialRow(record, now);
  return async (q) => {
    const [session] = await q('SELECT id FROM sessions WHERE id = $1 FOR UPDATE', [row.session_id]);
    if (!session) return false;
    const [holder] = await q<{ session_id: string }>('SELECT session_id FROM egress_credentials WHERE token_digest = $1', [row.token_digest]);
    checkDigestHolder(holder?.session_id ?? null, row);
    await q(
      `INSERT INTO egress_credentials (session_id, token_digest, policy, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (session_id) DO UPDATE SET token_digest=excluded.token_digest, policy=excluded.policy, created_at=excluded.created_at`,
      [row.session_id, row.token_digest, row.policy, row.created_at],
    );
    return true;
  };
}

export function readCredential(tokenDigest: string): Work<EgressCredentialRecord | null> {
  return async (q) => {
    const [row] = await q<EgressCredentialDbRow>('SELECT session_id, token_digest, policy, created_at FROM egress_credentials WHERE token_digest = $1', [tokenDigest]);
    return row ? egressCredentialFromRow(row) : null;
  };
}

export function removeCredential(sessionId: string): Work<void> {
  return async (q) => {
    await q('DELETE FROM egress_credentials WHERE session_id = $1', [sessionId]);
  };
}

/** Inserts the records of existing sessions (one statement), then drops each session's records beyond the latest kept; the rows inserted. */
export function appendRecords(records: readonly EgressRecordInput[]): Work<number> {
  const { rows, sessionIds } = egressBatch(records);
  // one id per call: an attempt retried after a lost connection finds its first attempt's rows
  const batchId = randomUUID();
  return async (q) => {
    if (rows.length === 0) return 0;
    // in id order: two appends of overlapping sessions lock them in the same order
    const found = await q<{ id: string }>('SELECT id FROM sessions WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE', [sessionIds]);
    const live = new Set(found.map((r) => r.id));
    const kept = rows.filter((r) => live.has(r.session_id));
    if (kept.length === 0) return 0;
    const [committed] = await q('SELECT 1 FROM egress_records WHERE batch_id = $1 LIMIT 1', [batchId]);
    if (committed) return kept.length;
    const values = kept.map(egressRecordValues);
    const columns = COLUMN_TYPES.map((_, i) => values.map((v) => v[i]));
    // in batch order: the records' seq follows the order they were handed over
    await q(
      `INSERT INTO egress_records (${EGRESS_RECORD_COLUMNS}, batch_id)
       SELECT ${EGRESS_RECORD_COLUMNS}, $${COLUMN_TYPES.length + 1} FROM unnest(${UNNEST_ARGS}) WITH ORDINALITY AS r(${EGRESS_RECORD_COLUMNS}, n) ORDER BY n`,
      [...columns, batchId],
    );
    for (const id of live) {
      await q('DELETE FROM egress_records WHERE session_id = $1 AND seq <= (SELECT seq FROM egress_records WHERE session_id = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2)', [id, EGRESS_RECORDS_KEPT]);
    }
    return kept.length;
  };
}

export function readRecords(sessionId: string, opts: { after?: number; limit?: number }): Work<EgressRecordRow[]> {
  const { after, limit } = egressListBounds(sessionId, opts);
  return async (q) => {
    const rows = await q<EgressRecordDbRow>(`SELECT seq, ${EGRESS_RECORD_COLUMNS} FROM egress_records WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, [sessionId, after, limit]);
    return rows.map(egressRecordFromRow);
  };
}

export function readSummary(sessionId: string): Work<EgressSummary> {
  return async (q) => {
    const [row] = await q<EgressSummaryDbRow>(`${EGRESS_SUMMARY_SELECT} WHERE session_id = $1`, [sessionId]);
    return egressSummaryFromRow(row, sessionId);
  };
}
