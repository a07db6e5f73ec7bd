/**
 * The egress rows of the SQLite inventory (egress-records.ts checks and maps them). A write checks
 * its input when called and returns the work for the store's fenced, write-locked transaction
 * (SQLite's single writer serializes appends, so a session's `seq` order is its commit order).
 * @module
 */
import type Database from 'better-sqlite3';
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
} from './egress-records.js';
import type { EgressCredentialRecord, EgressRecordInput, EgressRecordRow, EgressSummary } from './inventory.js';

const RECORD_PARAMS = EGRESS_RECORD_COLUMNS.split(', ')
  .map(() => '?')
  .join(', ');

/** Stores a session's credential over its previous one; false when the session does not exist. */
export function writeCredential(db: Database.Database, record: Omit<EgressCredentialRecord, 'createdAt'>, now: Date): () => boolean {
  const row = egressCredentialRow(record, now);
  return () => {
    if (db.prepare('SELECT 1 FROM sessions WHERE id = ?').get(row.session_id) === undefined) return false;
    const holder = db.prepare('SELECT session_id FROM egress_credentials WHERE token_digest = ?').get(row.token_digest) as { session_id: string } | undefined;
    checkDigestHolder(holder?.session_id ?? null, row);
    db.prepare(
      `INSERT INTO egress_credentials (session_id, token_digest, policy, created_at) VALUES (@session_id, @token_digest, @policy, @created_at)
       ON CONFLICT(session_id) DO UPDATE SET token_digest=excluded.token_digest, policy=excluded.policy, created_at=excluded.created_at`,
    ).run(row);
    return true;
  };
}

export function readCredential(db: Database.Database, tokenDigest: string): EgressCredentialRecord | null {
  const row = db.prepare('SELECT * FROM egress_credentials WHERE token_digest = ?').get(tokenDigest) as EgressCredentialDbRow | undefined;
  return row ? egressCredentialFromRow(row) : null;
}

export function removeCredential(db: Database.Database, sessionId: string): () => void {
  return () => {
    db.prepare('DELETE FROM egress_credentials WHERE session_id = ?').run(sessionId);
  };
}

/** Inserts the records of existing sessions, then drops each session's records beyond the latest kept; the rows inserted. */
export function appendRecords(db: Database.Database, records: readonly EgressRecordInput[]): () => number {
  const { rows, sessionIds } = egressBatch(records);
  return () => {
    const exists = db.prepare('SELECT 1 FROM sessions WHERE id = ?');
    const live = new Set(sessionIds.filter((id) => exists.get(id) !== undefined));
    const insert = db.prepare(`INSERT INTO egress_records (${EGRESS_RECORD_COLUMNS}) VALUES (${RECORD_PARAMS})`);
    let written = 0;
    for (const row of rows) {
      if (!live.has(row.session_id)) continue;
      insert.run(...egressRecordValues(row));
      written++;
    }
    const prune = db.prepare('DELETE FROM egress_records WHERE session_id = ? AND seq <= (SELECT seq FROM egress_records WHERE session_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)');
    for (const id of live) prune.run(id, id, EGRESS_RECORDS_KEPT);
    return written;
  };
}

export function readRecords(db: Database.Database, sessionId: string, opts: { after?: number; limit?: number }): EgressRecordRow[] {
  const { after, limit } = egressListBounds(sessionId, opts);
  const rows = db.prepare('SELECT * FROM egress_records WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(sessionId, after, limit) as EgressRecordDbRow[];
  return rows.map(egressRecordFromRow);
}

export function readSummary(db: Database.Database, sessionId: string): EgressSummary {
  return egressSummaryFromRow(db.prepare(`${EGRESS_SUMMARY_SELECT} WHERE session_id = ?`).get(sessionId) as EgressSummaryDbRow | undefined, sessionId);
}
