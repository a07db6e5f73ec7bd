/**
 * The recorded output rows of the Postgres inventory (output-records.ts decides what a row holds):
 * the queries, run inside the store's fenced transaction (writes) or a plain read.
 * @module
 */
import { RECORDED_RUNS_KEPT, recordedOutputFromRow, type RecordedOutputRecord, type RecordedOutputRow } from '../output-records.js';
import type { Query } from './runner.js';

/**
 * Writes one run's row as the session's latest and drops its runs beyond the latest kept; false
 * when the session does not exist. The session row is the lock: writers of one session take turns.
 */
export async function writeOutput(q: Query, row: RecordedOutputRow): Promise<boolean> {
  const [session] = await q('SELECT id FROM sessions WHERE id = $1 FOR UPDATE', [row.session_id]);
  if (!session) return false;
  await q(
    `INSERT INTO recorded_output (session_id, process_id, run_order, bytes, chunks, updated_at)
     VALUES ($1, $2, (SELECT COALESCE(MAX(run_order), 0) + 1 FROM recorded_output WHERE session_id = $1), $3, $4, $5)
     ON CONFLICT (session_id, process_id) DO UPDATE SET run_order=excluded.run_order, bytes=excluded.bytes, chunks=excluded.chunks, updated_at=excluded.updated_at`,
    [row.session_id, row.process_id, row.bytes, row.chunks, row.updated_at],
  );
  await q('DELETE FROM recorded_output WHERE session_id = $1 AND run_order NOT IN (SELECT run_order FROM recorded_output WHERE session_id = $1 ORDER BY run_order DESC LIMIT $2)', [
    row.session_id,
    RECORDED_RUNS_KEPT,
  ]);
  return true;
}

/** The chunks of one recorded run from `from` on; null when the run is not recorded. */
export async function readOutput(q: Query, sessionId: string, processId: string, from: number): Promise<RecordedOutputRecord[] | null> {
  const [row] = await q<{ session_id: string; process_id: string; chunks: string }>(
    'SELECT session_id, process_id, chunks FROM recorded_output WHERE session_id = $1 AND process_id = $2',
    [sessionId, processId],
  );
  return row ? recordedOutputFromRow(row, from) : null;
}
