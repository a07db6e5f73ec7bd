/**
 * The Postgres inventory, for controllers that share one database (a team deployment with replicas).
 * Same semantics as the SQLite store (rules.ts decides, records.ts maps rows), with row locks where
 * SQLite relies on its single writer: read-modify-write transactions lock the row they read
 * (`SELECT … FOR UPDATE`). Every write is committed (synchronous commit) before its promise resolves,
 * and is safe to retry whole after a lost connection (runner.ts). Egress rows: egress.ts.
 * @module
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { InventoryOpenError, SecretStoreError } from '../errors.js';
import type { EgressCredentialRecord, EgressRecordInput, EgressRecordRow, EgressSummary, Inventory, InventoryFence, RuntimeUpsert, SessionPatch } from '../inventory.js';
import { recordedOutputRow, type RecordedOutputInput, type RecordedOutputOptions, type RecordedOutputRecord } from '../output-records.js';
import {
  claimedPoolMember,
  insertedPoolMember,
  patchedPoolMember,
  POOL_MEMBER_COLUMNS,
  poolMemberFromRow,
  poolMemberOverExisting,
  poolMemberToRow,
  poolMemberValues,
  type NewPoolMember,
  type PoolClaim,
  type PoolMemberPatch,
  type PoolMemberRecord,
  type PoolMemberRow,
  type PoolMemberState,
} from '../pool-records.js';
import { runtimeFromRow, runtimeToRow, sessionFromRow, sessionToRow, type RuntimeRecord, type RuntimeRow, type SessionRecord, type SessionRow } from '../records.js';
import {
  checkedFence,
  checkFence,
  checkSecretId,
  insertedSession,
  insertOverExisting,
  mayClaim,
  patchedSession,
  releaseDeletes,
  upsertedRuntime,
  type NewSession,
} from '../rules.js';
import { decryptSecret, encryptSecret } from '../secrets.js';
import { appendRecords, readCredential, readRecords, readSummary, removeCredential, writeCredential } from './egress.js';
import { migratePostgres } from './migrations.js';
import { readOutput, writeOutput } from './output.js';
import { placeholders, RUNTIME_COLUMNS, runtimeValues, SESSION_COLUMNS, sessionValues } from './rows.js';
import { describeUrl, PgRunner, urlSecrets, type Query } from './runner.js';

interface PostgresInventoryOptions {
  /** The connection string (`postgres://user:password@host:5432/db`); never shown in errors. */
  url: string;
  /** The secrets' AES-256-GCM key (32 bytes), the same on every controller sharing the database. */
  secretKey: Buffer;
  /** Clock for `created_at`/`updated_at` (tests). @default () => new Date() */
  now?: () => Date;
  /** The executors' own metadata key prefixes (as for the SQLite store). @default none */
  metadataKeyPrefixes?: readonly string[];
  /** How long a lost connection is retried before a call fails. @default 15000 */
  retryBudgetMs?: number;
  /** Connections in the pool. @default 10 */
  poolSize?: number;
}

/** A write frozen mid-transaction (SIGSTOP) would hold its fence lock, and the next leader's claim wait, that long: the server ends it after this. */
const IDLE_IN_TRANSACTION_MS = 10_000;

export class PostgresInventory implements Inventory {
  readonly backend = 'postgres' as const;
  readonly #pool: pg.Pool;
  readonly #run: PgRunner;
  readonly #key: Buffer;
  readonly #now: () => Date;
  readonly #metadataKeyPrefixes: readonly string[];
  /** This store's fence claim; null: single-controller mode, writes unchecked. */
  #claim: InventoryFence | null = null;

  private constructor(pool: pg.Pool, run: PgRunner, opts: PostgresInventoryOptions) {
    this.#pool = pool;
    this.#run = run;
    this.#key = opts.secretKey;
    this.#now = opts.now ?? (() => new Date());
    this.#metadataKeyPrefixes = [...(opts.metadataKeyPrefixes ?? [])];
  }

  /**
   * Connects (retrying a database that is not up yet for the retry budget) and applies pending
   * migrations. Throws InventoryOpenError, whose message names the database without credentials.
   */
  static async open(opts: PostgresInventoryOptions): Promise<PostgresInventory> {
    if (opts.secretKey.length !== 32) throw new InventoryOpenError(describeUrl(opts.url), 'the secret key must be 32 bytes');
    const pool = new pg.Pool({ connectionString: opts.url, max: opts.poolSize ?? 10, connectionTimeoutMillis: 5000, keepAlive: true, idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS });
    // an idle connection dropped by a server restart is an 'error' event: the pool discards that
    // client and the next call reconnects, so there is nothing more to do (and no crash)
    pool.on('error', () => undefined);
    const run = new PgRunner(pool, { retryBudgetMs: opts.retryBudgetMs ?? 15_000, secrets: urlSecrets(opts.url) });
    try {
      await run.transaction(migratePostgres);
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw new InventoryOpenError(describeUrl(opts.url), run.redact(err));
    }
    return new PostgresInventory(pool, run, opts);
  }

  async close(): Promise<void> {
    if (!this.#pool.ended && !this.#pool.ending) await this.#pool.end();
  }

  async schemaVersion(): Promise<number> {
    const [row] = await this.#run.read((q) => q<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations'));
    return row?.v ?? 0;
  }

  // ---- sessions -------------------------------------------------------------------------------

  async insertSession(record: NewSession): Promise<SessionRecord> {
    // stamped once: a retried attempt writes exactly what a lost first attempt may have committed
    const full = insertedSession(record, this.#now());
    return this.#write(async (q) => {
      const inserted = await q(`INSERT INTO sessions (${SESSION_COLUMNS}) VALUES (${placeholders(12)}) ON CONFLICT (id) DO NOTHING RETURNING id`, sessionValues(sessionToRow(full)));
      if (inserted.length === 1) return full;
      const existing = await this.#session(q, record.id, '');
      if (!existing) throw new Error(`inventory: session '${record.id}' vanished during its insert`);
      return insertOverExisting(existing, record);
    });
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    return this.#run.read((q) => this.#session(q, id, ''));
  }

  async listSessions(): Promise<SessionRecord[]> {
    const rows = await this.#run.read((q) => q<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY created_at, id`));
    return rows.map(sessionFromRow);
  }

  async updateSession(id: string, patch: SessionPatch): Promise<SessionRecord | null> {
    return this.#write(async (q) => {
      const current = await this.#session(q, id, ' FOR UPDATE');
      if (!current) return null;
      const next = patchedSession(current, patch, this.#now());
      const r = sessionToRow(next);
      await q('UPDATE sessions SET name=$2, state=$3, error=$4, stages=$5, workspace_path=$6, updated_at=$7 WHERE id=$1', [
        r.id,
        r.name,
        r.state,
        r.error,
        r.stages,
        r.workspace_path,
        r.updated_at,
      ]);
      return next;
    });
  }

  async deleteSession(id: string): Promise<void> {
    await this.#write(async (q) => {
      await q('SELECT id FROM sessions WHERE id = $1 FOR UPDATE', [id]);
      const runtime = await this.#runtime(q, id, ' FOR UPDATE');
      const secretIds = runtime ? Object.values(runtime.secretRefs) : [];
      if (secretIds.length > 0) await q('DELETE FROM secrets WHERE id = ANY($1::text[])', [secretIds]);
      await q('DELETE FROM runtime_inventory WHERE session_id = $1', [id]);
      await q('DELETE FROM recorded_output WHERE session_id = $1', [id]);
      await q('DELETE FROM egress_credentials WHERE session_id = $1', [id]);
      await q('DELETE FROM egress_records WHERE session_id = $1', [id]);
      await q('DELETE FROM sessions WHERE id = $1', [id]);
    });
  }

  // ---- runtime inventory ----------------------------------------------------------------------

  async getRuntime(sessionId: string): Promise<RuntimeRecord | null> {
    return this.#run.read((q) => this.#runtime(q, sessionId, ''));
  }

  async listRuntime(): Promise<RuntimeRecord[]> {
    const rows = await this.#run.read((q) => q<RuntimeRow>(`SELECT ${RUNTIME_COLUMNS} FROM runtime_inventory ORDER BY session_id`));
    return rows.map(runtimeFromRow);
  }

  async upsertRuntime(record: RuntimeUpsert, opts: { replaceInstance?: string } = {}): Promise<RuntimeRecord> {
    return this.#write(async (q) => {
      // the session row is the lock: two writers of one session's runtime row (even its first) take turns
      await q('SELECT id FROM sessions WHERE id = $1 FOR UPDATE', [record.sessionId]);
      const current = await this.#runtime(q, record.sessionId, '');
      const row = runtimeToRow(upsertedRuntime(current, record, opts, this.#now()), this.#metadataKeyPrefixes);
      await q(
        `INSERT INTO runtime_inventory (${RUNTIME_COLUMNS}) VALUES (${placeholders(9)})
         ON CONFLICT (session_id) DO UPDATE SET instance_id=excluded.instance_id, executor=excluded.executor, state=excluded.state,
           metadata=excluded.metadata, stages=excluded.stages, secret_refs=excluded.secret_refs,
           created_at=excluded.created_at, updated_at=excluded.updated_at`,
        runtimeValues(row),
      );
      return runtimeFromRow(row);
    });
  }

  async releaseRuntime(sessionId: string, instanceId: string, updatedAt: string): Promise<void> {
    await this.#write(async (q) => {
      if (releaseDeletes(await this.#runtime(q, sessionId, ' FOR UPDATE'), sessionId, instanceId, updatedAt)) {
        await q('DELETE FROM runtime_inventory WHERE session_id = $1', [sessionId]);
      }
    });
  }

  // ---- warm pool members ---------------------------------------------------------------------

  async insertPoolMember(record: NewPoolMember): Promise<PoolMemberRecord> {
    // stamped once: a retried attempt writes exactly what a lost first attempt may have committed
    const row = poolMemberToRow(insertedPoolMember(record, this.#now()), this.#metadataKeyPrefixes);
    return this.#write(async (q) => {
      const inserted = await q(`INSERT INTO pool_members (${POOL_MEMBER_COLUMNS}) VALUES (${placeholders(10)}) ON CONFLICT (id) DO NOTHING RETURNING id`, poolMemberValues(row));
      if (inserted.length === 1) return poolMemberFromRow(row);
      const [existing] = await q<PoolMemberRow>(`SELECT ${POOL_MEMBER_COLUMNS} FROM pool_members WHERE id = $1`, [row.id]);
      if (!existing) throw new Error(`inventory: pool member '${row.id}' vanished during its insert`);
      return poolMemberOverExisting(existing, row);
    });
  }

  async getPoolMember(id: string): Promise<PoolMemberRecord | null> {
    return this.#run.read((q) => this.#poolMember(q, id, ''));
  }

  async listPoolMembers(filter: { executor?: string; profile?: string } = {}): Promise<PoolMemberRecord[]> {
    const rows = await this.#run.read((q) =>
      q<PoolMemberRow>(
        `SELECT ${POOL_MEMBER_COLUMNS} FROM pool_members WHERE ($1::text IS NULL OR executor = $1) AND ($2::text IS NULL OR profile = $2) ORDER BY created_at, id`,
        [filter.executor ?? null, filter.profile ?? null],
      ),
    );
    return rows.map(poolMemberFromRow);
  }

  async updatePoolMember(id: string, patch: PoolMemberPatch, expect: { state: PoolMemberState }): Promise<PoolMemberRecord | null> {
    return this.#write(async (q) => {
      const next = patchedPoolMember(await this.#poolMember(q, id, ' FOR UPDATE'), patch, expect.state, this.#now());
      if (next === null) return null;
      const r = poolMemberToRow(next, this.#metadataKeyPrefixes);
      await q('UPDATE pool_members SET state=$2, metadata=$3, secret_refs=$4, updated_at=$5 WHERE id=$1', [r.id, r.state, r.metadata, r.secret_refs, r.updated_at]);
      return poolMemberFromRow(r);
    });
  }

  async claimPoolMember(claim: PoolClaim): Promise<PoolMemberRecord | null> {
    return this.#write(async (q) => {
      // SKIP LOCKED: a concurrent claim holding the oldest member's lock makes this one take the next
      const [oldest] = await q<PoolMemberRow>(
        `SELECT ${POOL_MEMBER_COLUMNS} FROM pool_members WHERE state = 'ready' AND executor = $1 AND profile = $2 AND profile_hash = $3
         ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [claim.executor, claim.profile, claim.profileHash],
      );
      if (!oldest) return null;
      const next = claimedPoolMember(poolMemberFromRow(oldest), claim, this.#now());
      await q('UPDATE pool_members SET state = $2, session_id = $3, updated_at = $4 WHERE id = $1', [next.id, next.state, next.sessionId, next.updatedAt]);
      return next;
    });
  }

  async deletePoolMember(id: string): Promise<void> {
    await this.#write(async (q) => {
      const member = await this.#poolMember(q, id, ' FOR UPDATE');
      const secretIds = member ? Object.values(member.secretRefs) : [];
      if (secretIds.length > 0) await q('DELETE FROM secrets WHERE id = ANY($1::text[])', [secretIds]);
      await q('DELETE FROM pool_members WHERE id = $1', [id]);
    });
  }

  // ---- recorded output ------------------------------------------------------------------------

  async putRecordedOutput(sessionId: string, processId: string, chunks: readonly RecordedOutputInput[], opts: RecordedOutputOptions = {}): Promise<boolean> {
    const row = recordedOutputRow(sessionId, processId, chunks, opts, this.#now());
    return this.#write((q) => writeOutput(q, row));
  }

  async readRecordedOutput(sessionId: string, processId: string, from = 0): Promise<RecordedOutputRecord[] | null> {
    return this.#run.read((q) => readOutput(q, sessionId, processId, from));
  }

  // ---- egress (egress.ts) ---------------------------------------------------------------------

  async putEgressCredential(record: Omit<EgressCredentialRecord, 'createdAt'>): Promise<boolean> {
    return this.#write(writeCredential(record, this.#now()));
  }

  async findEgressCredential(tokenDigest: string): Promise<EgressCredentialRecord | null> {
    return this.#run.read(readCredential(tokenDigest));
  }

  async deleteEgressCredential(sessionId: string): Promise<void> {
    await this.#write(removeCredential(sessionId));
  }

  async appendEgressRecords(records: readonly EgressRecordInput[]): Promise<number> {
    return this.#write(appendRecords(records));
  }

  async listEgressRecords(sessionId: string, opts: { after?: number; limit?: number } = {}): Promise<EgressRecordRow[]> {
    return this.#run.read(readRecords(sessionId, opts));
  }

  async egressSummary(sessionId: string): Promise<EgressSummary> {
    return this.#run.read(readSummary(sessionId));
  }

  // ---- secrets --------------------------------------------------------------------------------

  async putSecret(id: string, plaintext: string): Promise<string> {
    checkSecretId(id);
    const enc = encryptSecret(this.#key, id, plaintext);
    const at = this.#now().toISOString();
    await this.#write((q) =>
      q(
        `INSERT INTO secrets (id, ciphertext, iv, tag, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (id) DO UPDATE SET ciphertext=excluded.ciphertext, iv=excluded.iv, tag=excluded.tag, created_at=excluded.created_at`,
        [id, enc.ciphertext, enc.iv, enc.tag, at],
      ),
    );
    return id;
  }

  async revealSecret(id: string): Promise<string> {
    const [row] = await this.#run.read((q) => q<{ ciphertext: Buffer; iv: Buffer; tag: Buffer }>('SELECT ciphertext, iv, tag FROM secrets WHERE id = $1', [id]));
    if (!row) throw new SecretStoreError(id, 'not found');
    return decryptSecret(this.#key, id, row);
  }

  async deleteSecret(id: string): Promise<void> {
    await this.#write((q) => q('DELETE FROM secrets WHERE id = $1', [id]));
  }

  async listSecretIds(): Promise<string[]> {
    return (await this.#run.read((q) => q<{ id: string }>('SELECT id FROM secrets ORDER BY id'))).map((r) => r.id);
  }

  /** A row of `settings`, created once (whoever inserts first wins; the others read it). Not fenced: it never changes. */
  async installationId(): Promise<string> {
    return this.#run.transaction(async (q) => {
      await q("INSERT INTO settings (key, value) VALUES ('installation_id', $1) ON CONFLICT (key) DO NOTHING", [randomBytes(16).toString('hex')]);
      const [row] = await q<{ value: string }>("SELECT value FROM settings WHERE key = 'installation_id'");
      if (!row) throw new Error('inventory: the installation id row vanished while it was created');
      return row.value;
    });
  }

  // ---- fencing --------------------------------------------------------------------------------

  async claimFence(fence: InventoryFence): Promise<boolean> {
    const claim = checkedFence(fence);
    const claimed = await this.#run.transaction(async (q) => {
      // the row exists from the first claim on; generation -1 stands for "never claimed"
      await q("INSERT INTO fence (id, holder, generation) VALUES (1, '', -1) ON CONFLICT (id) DO NOTHING");
      const stored = await storedFence(q, ' FOR UPDATE');
      if (!mayClaim(claim, stored)) return false;
      await q('UPDATE fence SET holder = $1, generation = $2 WHERE id = 1', [claim.holder, claim.generation]);
      return true;
    });
    // claimed or not, writes are now checked against this claim: a refused one refuses them too
    this.#claim = claim;
    return claimed;
  }

  // ---- internals ------------------------------------------------------------------------------

  /**
   * Runs `fn` in a transaction that first checks this store's fence claim. The fence row is read
   * FOR SHARE: this controller's writes run side by side, while a claim (FOR UPDATE) waits for them
   * and every write after it sees the new holder.
   */
  #write<T>(fn: (q: Query) => Promise<T>): Promise<T> {
    return this.#run.transaction(async (q) => {
      const claim = this.#claim;
      if (claim !== null) checkFence(claim, await storedFence(q, ' FOR SHARE'));
      return fn(q);
    });
  }

  async #session(q: Query, id: string, lock: '' | ' FOR UPDATE'): Promise<SessionRecord | null> {
    const [row] = await q<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1${lock}`, [id]);
    return row ? sessionFromRow(row) : null;
  }

  async #runtime(q: Query, sessionId: string, lock: '' | ' FOR UPDATE'): Promise<RuntimeRecord | null> {
    const [row] = await q<RuntimeRow>(`SELECT ${RUNTIME_COLUMNS} FROM runtime_inventory WHERE session_id = $1${lock}`, [sessionId]);
    return row ? runtimeFromRow(row) : null;
  }

  async #poolMember(q: Query, id: string, lock: '' | ' FOR UPDATE'): Promise<PoolMemberRecord | null> {
    const [row] = await q<PoolMemberRow>(`SELECT ${POOL_MEMBER_COLUMNS} FROM pool_members WHERE id = $1${lock}`, [id]);
    return row ? poolMemberFromRow(row) : null;
  }
}

/** The stored fence; null when never claimed. */
async function storedFence(q: Query, lock: ' FOR UPDATE' | ' FOR SHARE'): Promise<InventoryFence | null> {
  const [row] = await q<{ holder: string; generation: string }>(`SELECT holder, generation FROM fence WHERE id = 1${lock}`);
  if (!row || Number(row.generation) < 0) return null;
  return { holder: row.holder, generation: Number(row.generation) };
}
