/**
 * The SQLite inventory (better-sqlite3, WAL, synchronous=FULL; opened by sqlite-open.ts): sessions,
 * one runtime row per instance, warm pool members, encrypted secrets, mirrored output and egress
 * records (egress-sqlite.ts). The work is synchronous inside; every write is durable (committed
 * and synced) before its promise resolves. The semantics are rules.ts's, shared with Postgres.
 * @module
 */
import type Database from 'better-sqlite3';
import { join } from 'node:path';
import { ensureInstallationId } from '../shared/installation-id.js';
import { appendRecords, readCredential, readRecords, readSummary, removeCredential, writeCredential } from './egress-sqlite.js';
import { SecretStoreError } from './errors.js';
import type { EgressCredentialRecord, EgressRecordInput, EgressRecordRow, EgressSummary, Inventory, InventoryFence, RuntimeUpsert, SessionPatch } from './inventory.js';
import { RECORDED_RUNS_KEPT, recordedOutputFromRow, recordedOutputRow, type RecordedOutputInput, type RecordedOutputOptions, type RecordedOutputRecord } from './output-records.js';
import {
  claimedPoolMember,
  insertedPoolMember,
  patchedPoolMember,
  POOL_MEMBER_COLUMNS,
  poolMemberFromRow,
  poolMemberOverExisting,
  poolMemberToRow,
  type NewPoolMember,
  type PoolClaim,
  type PoolMemberPatch,
  type PoolMemberRecord,
  type PoolMemberRow,
  type PoolMemberState,
} from './pool-records.js';
import { runtimeFromRow, runtimeToRow, sessionFromRow, sessionToRow, type RuntimeRecord, type RuntimeRow, type SessionRecord, type SessionRow } from './records.js';
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
} from './rules.js';
import { decryptSecret, encryptSecret, loadOrCreateKey, SECRET_KEY_FILE } from './secrets.js';
import { openSqliteDatabase } from './sqlite-open.js';

/** The named parameters of a pool member row, in POOL_MEMBER_COLUMNS order. */
const POOL_MEMBER_PARAMS = POOL_MEMBER_COLUMNS.split(', ')
  .map((c) => `@${c}`)
  .join(', ');

interface InventoryStoreOptions {
  /** The data dir; the database is `<dataDir>/state/berth.db`, the key `<dataDir>/state/secret.key`. */
  dataDir: string;
  /** Clock for `created_at`/`updated_at` (tests). @default () => new Date() */
  now?: () => Date;
  /** Milliseconds SQLite waits on a locked database. @default 5000 */
  busyTimeoutMs?: number;
  /** The executors' own metadata key prefixes (their `metadataKeyPrefix`): runtime rows may persist keys under these. @default none */
  metadataKeyPrefixes?: readonly string[];
}

export class InventoryStore implements Inventory {
  readonly backend = 'sqlite' as const;
  readonly #db: Database.Database;
  readonly #now: () => Date;
  readonly #keyPath: string;
  readonly #dataDir: string;
  readonly #metadataKeyPrefixes: readonly string[];
  #key: Buffer | null = null;
  /** This store's fence claim; null: single-controller mode, writes unchecked. */
  #claim: InventoryFence | null = null;

  private constructor(db: Database.Database, dataDir: string, stateDir: string, now: () => Date, metadataKeyPrefixes: readonly string[]) {
    this.#db = db;
    this.#dataDir = dataDir;
    this.#now = now;
    this.#metadataKeyPrefixes = metadataKeyPrefixes;
    this.#keyPath = join(stateDir, SECRET_KEY_FILE);
  }

  /** Opens (creating if needed) the inventory in `dataDir` and applies pending migrations. Throws InventoryOpenError. */
  static open(opts: InventoryStoreOptions): InventoryStore {
    const { db, stateDir } = openSqliteDatabase(opts.dataDir, opts.busyTimeoutMs ?? 5000);
    return new InventoryStore(db, opts.dataDir, stateDir, opts.now ?? (() => new Date()), [...(opts.metadataKeyPrefixes ?? [])]);
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }

  async schemaVersion(): Promise<number> {
    const row = this.#db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
    return row.v ?? 0;
  }

  // ---- sessions -------------------------------------------------------------------------------

  async insertSession(record: NewSession): Promise<SessionRecord> {
    return this.#write(() => {
      const existing = this.#session(record.id);
      if (existing) return insertOverExisting(existing, record);
      const full = insertedSession(record, this.#now());
      this.#db
        .prepare(
          `INSERT INTO sessions (id, name, executor, agent, repository, request, state, error, stages, workspace_path, created_at, updated_at)
           VALUES (@id, @name, @executor, @agent, @repository, @request, @state, @error, @stages, @workspace_path, @created_at, @updated_at)`,
        )
        .run(sessionToRow(full));
      return full;
    });
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    return this.#session(id);
  }

  async listSessions(): Promise<SessionRecord[]> {
    const rows = this.#db.prepare('SELECT * FROM sessions ORDER BY created_at, id').all() as SessionRow[];
    return rows.map(sessionFromRow);
  }

  async updateSession(id: string, patch: SessionPatch): Promise<SessionRecord | null> {
    return this.#write(() => {
      const current = this.#session(id);
      if (!current) return null;
      const next = patchedSession(current, patch, this.#now());
      this.#db
        .prepare('UPDATE sessions SET name=@name, state=@state, error=@error, stages=@stages, workspace_path=@workspace_path, updated_at=@updated_at WHERE id=@id')
        .run(sessionToRow(next));
      return next;
    });
  }

  async deleteSession(id: string): Promise<void> {
    this.#write(() => {
      const runtime = this.#runtime(id);
      const deleteSecret = this.#db.prepare('DELETE FROM secrets WHERE id = ?');
      if (runtime) for (const secretId of Object.values(runtime.secretRefs)) deleteSecret.run(secretId);
      this.#db.prepare('DELETE FROM runtime_inventory WHERE session_id = ?').run(id);
      this.#db.prepare('DELETE FROM recorded_output WHERE session_id = ?').run(id);
      this.#db.prepare('DELETE FROM egress_credentials WHERE session_id = ?').run(id);
      this.#db.prepare('DELETE FROM egress_records WHERE session_id = ?').run(id);
      this.#db.prepare('DELETE FROM sessions WHERE id = ?').run(id);
    });
  }

  // ---- runtime inventory ----------------------------------------------------------------------

  async getRuntime(sessionId: string): Promise<RuntimeRecord | null> {
    return this.#runtime(sessionId);
  }

  async listRuntime(): Promise<RuntimeRecord[]> {
    const rows = this.#db.prepare('SELECT * FROM runtime_inventory ORDER BY session_id').all() as RuntimeRow[];
    return rows.map(runtimeFromRow);
  }

  async upsertRuntime(record: RuntimeUpsert, opts: { replaceInstance?: string } = {}): Promise<RuntimeRecord> {
    return this.#write(() => {
      const row = runtimeToRow(upsertedRuntime(this.#runtime(record.sessionId), record, opts, this.#now()), this.#metadataKeyPrefixes);
      this.#db
        .prepare(
          `INSERT INTO runtime_inventory (session_id, instance_id, executor, state, metadata, stages, secret_refs, created_at, updated_at)
           VALUES (@session_id, @instance_id, @executor, @state, @metadata, @stages, @secret_refs, @created_at, @updated_at)
           ON CONFLICT(session_id) DO UPDATE SET instance_id=excluded.instance_id, executor=excluded.executor, state=excluded.state,
             metadata=excluded.metadata, stages=excluded.stages, secret_refs=excluded.secret_refs,
             created_at=excluded.created_at, updated_at=excluded.updated_at`,
        )
        .run(row);
      return runtimeFromRow(row);
    });
  }

  async releaseRuntime(sessionId: string, instanceId: string, updatedAt: string): Promise<void> {
    this.#write(() => {
      if (releaseDeletes(this.#runtime(sessionId), sessionId, instanceId, updatedAt)) {
        this.#db.prepare('DELETE FROM runtime_inventory WHERE session_id = ?').run(sessionId);
      }
    });
  }

  // ---- warm pool members ---------------------------------------------------------------------

  async insertPoolMember(record: NewPoolMember): Promise<PoolMemberRecord> {
    return this.#write(() => {
      const row = poolMemberToRow(insertedPoolMember(record, this.#now()), this.#metadataKeyPrefixes);
      const existing = this.#db.prepare('SELECT * FROM pool_members WHERE id = ?').get(row.id) as PoolMemberRow | undefined;
      if (existing) return poolMemberOverExisting(existing, row);
      this.#db.prepare(`INSERT INTO pool_members (${POOL_MEMBER_COLUMNS}) VALUES (${POOL_MEMBER_PARAMS})`).run(row);
      return poolMemberFromRow(row);
    });
  }

  async getPoolMember(id: string): Promise<PoolMemberRecord | null> {
    return this.#poolMember(id);
  }

  async listPoolMembers(filter: { executor?: string; profile?: string } = {}): Promise<PoolMemberRecord[]> {
    const rows = this.#db
      .prepare('SELECT * FROM pool_members WHERE (@executor IS NULL OR executor = @executor) AND (@profile IS NULL OR profile = @profile) ORDER BY created_at, id')
      .all({ executor: filter.executor ?? null, profile: filter.profile ?? null }) as PoolMemberRow[];
    return rows.map(poolMemberFromRow);
  }

  async updatePoolMember(id: string, patch: PoolMemberPatch, expect: { state: PoolMemberState }): Promise<PoolMemberRecord | null> {
    return this.#write(() => {
      const next = patchedPoolMember(this.#poolMember(id), patch, expect.state, this.#now());
      if (next === null) return null;
      const row = poolMemberToRow(next, this.#metadataKeyPrefixes);
      this.#db.prepare('UPDATE pool_members SET state=@state, metadata=@metadata, secret_refs=@secret_refs, updated_at=@updated_at WHERE id=@id').run(row);
      return poolMemberFromRow(row);
    });
  }

  async claimPoolMember(claim: PoolClaim): Promise<PoolMemberRecord | null> {
    // the immediate transaction holds the write lock from the read on: claims (of any store) take turns
    return this.#write(() => {
      const oldest = this.#db
        .prepare("SELECT * FROM pool_members WHERE state = 'ready' AND executor = ? AND profile = ? AND profile_hash = ? ORDER BY created_at, id LIMIT 1")
        .get(claim.executor, claim.profile, claim.profileHash) as PoolMemberRow | undefined;
      if (!oldest) return null;
      const next = claimedPoolMember(poolMemberFromRow(oldest), claim, this.#now());
      this.#db.prepare('UPDATE pool_members SET state = ?, session_id = ?, updated_at = ? WHERE id = ?').run(next.state, next.sessionId, next.updatedAt, next.id);
      return next;
    });
  }

  async deletePoolMember(id: string): Promise<void> {
    this.#write(() => {
      const member = this.#poolMember(id);
      const deleteSecret = this.#db.prepare('DELETE FROM secrets WHERE id = ?');
      if (member) for (const secretId of Object.values(member.secretRefs)) deleteSecret.run(secretId);
      this.#db.prepare('DELETE FROM pool_members WHERE id = ?').run(id);
    });
  }

  // ---- recorded output ------------------------------------------------------------------------

  async putRecordedOutput(sessionId: string, processId: string, chunks: readonly RecordedOutputInput[], opts: RecordedOutputOptions = {}): Promise<boolean> {
    const row = recordedOutputRow(sessionId, processId, chunks, opts, this.#now());
    return this.#write(() => {
      if (!this.#session(sessionId)) return false;
      this.#db
        .prepare(
          `INSERT INTO recorded_output (session_id, process_id, run_order, bytes, chunks, updated_at)
           VALUES (@session_id, @process_id, (SELECT COALESCE(MAX(run_order), 0) + 1 FROM recorded_output WHERE session_id = @session_id), @bytes, @chunks, @updated_at)
           ON CONFLICT(session_id, process_id) DO UPDATE SET run_order=excluded.run_order, bytes=excluded.bytes, chunks=excluded.chunks, updated_at=excluded.updated_at`,
        )
        .run(row);
      this.#db
        .prepare('DELETE FROM recorded_output WHERE session_id = ? AND run_order NOT IN (SELECT run_order FROM recorded_output WHERE session_id = ? ORDER BY run_order DESC LIMIT ?)')
        .run(sessionId, sessionId, RECORDED_RUNS_KEPT);
      return true;
    });
  }

  async readRecordedOutput(sessionId: string, processId: string, from = 0): Promise<RecordedOutputRecord[] | null> {
    const row = this.#db.prepare('SELECT session_id, process_id, chunks FROM recorded_output WHERE session_id = ? AND process_id = ?').get(sessionId, processId) as
      | { session_id: string; process_id: string; chunks: string }
      | undefined;
    return row ? recordedOutputFromRow(row, from) : null;
  }

  // ---- egress (egress-sqlite.ts) --------------------------------------------------------------

  async putEgressCredential(record: Omit<EgressCredentialRecord, 'createdAt'>): Promise<boolean> {
    return this.#write(writeCredential(this.#db, record, this.#now()));
  }

  async findEgressCredential(tokenDigest: string): Promise<EgressCredentialRecord | null> {
    return readCredential(this.#db, tokenDigest);
  }

  async deleteEgressCredential(sessionId: string): Promise<void> {
    this.#write(removeCredential(this.#db, sessionId));
  }

  async appendEgressRecords(records: readonly EgressRecordInput[]): Promise<number> {
    return this.#write(appendRecords(this.#db, records));
  }

  async listEgressRecords(sessionId: string, opts: { after?: number; limit?: number } = {}): Promise<EgressRecordRow[]> {
    return readRecords(this.#db, sessionId, opts);
  }

  async egressSummary(sessionId: string): Promise<EgressSummary> {
    return readSummary(this.#db, sessionId);
  }

  // ---- secrets --------------------------------------------------------------------------------

  async putSecret(id: string, plaintext: string): Promise<string> {
    checkSecretId(id);
    const enc = encryptSecret(this.#secretKey(), id, plaintext);
    this.#write(() => {
      this.#db
        .prepare('INSERT OR REPLACE INTO secrets (id, ciphertext, iv, tag, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(id, enc.ciphertext, enc.iv, enc.tag, this.#now().toISOString());
    });
    return id;
  }

  async revealSecret(id: string): Promise<string> {
    const row = this.#db.prepare('SELECT ciphertext, iv, tag FROM secrets WHERE id = ?').get(id) as
      | { ciphertext: Buffer; iv: Buffer; tag: Buffer }
      | undefined;
    if (!row) throw new SecretStoreError(id, 'not found');
    return decryptSecret(this.#secretKey(), id, row);
  }

  async deleteSecret(id: string): Promise<void> {
    this.#write(() => {
      this.#db.prepare('DELETE FROM secrets WHERE id = ?').run(id);
    });
  }

  async listSecretIds(): Promise<string[]> {
    return (this.#db.prepare('SELECT id FROM secrets ORDER BY id').all() as { id: string }[]).map((r) => r.id);
  }

  // ---- fencing --------------------------------------------------------------------------------

  /** The data dir's file (kept where `berth doctor` and earlier versions read it). */
  async installationId(): Promise<string> {
    return ensureInstallationId(this.#dataDir);
  }

  async claimFence(fence: InventoryFence): Promise<boolean> {
    const claim = checkedFence(fence);
    const claimed = this.#db
      .transaction(() => {
        if (!mayClaim(claim, this.#storedFence())) return false;
        this.#db
          .prepare('INSERT INTO fence (id, holder, generation) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET holder=excluded.holder, generation=excluded.generation')
          .run(claim.holder, claim.generation);
        return true;
      })
      .immediate();
    // claimed or not, writes are now checked against this claim: a refused one refuses them too
    this.#claim = claim;
    return claimed;
  }

  // ---- internals ------------------------------------------------------------------------------

  /** Runs `fn` in an immediate (write-locked) transaction that first checks this store's fence claim. */
  #write<T>(fn: () => T): T {
    return this.#db
      .transaction(() => {
        checkFence(this.#claim, this.#claim === null ? null : this.#storedFence());
        return fn();
      })
      .immediate();
  }

  #storedFence(): InventoryFence | null {
    return (this.#db.prepare('SELECT holder, generation FROM fence WHERE id = 1').get() as InventoryFence | undefined) ?? null;
  }

  #session(id: string): SessionRecord | null {
    const row = this.#db.prepare('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow | undefined;
    return row ? sessionFromRow(row) : null;
  }

  #runtime(sessionId: string): RuntimeRecord | null {
    const row = this.#db.prepare('SELECT * FROM runtime_inventory WHERE session_id = ?').get(sessionId) as RuntimeRow | undefined;
    return row ? runtimeFromRow(row) : null;
  }

  #poolMember(id: string): PoolMemberRecord | null {
    const row = this.#db.prepare('SELECT * FROM pool_members WHERE id = ?').get(id) as PoolMemberRow | undefined;
    return row ? poolMemberFromRow(row) : null;
  }

  #secretKey(): Buffer {
    this.#key ??= loadOrCreateKey(this.#keyPath);
    return this.#key;
  }
}
