/**
 * The SQLite inventory (better-sqlite3, WAL, synchronous=FULL): sessions, one runtime row per
 * instance, and encrypted secrets. Every write is durable when the call returns.
 * @module
 */
import Database from 'better-sqlite3';
import { accessSync, chmodSync, closeSync, constants as fsConstants, existsSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { errnoCode, errorMessage } from '../shared/errors.js';
import { ensureStateDir } from '../shared/layout.js';
import { InventoryConflictError, InventoryOpenError, SecretStoreError } from './errors.js';
import { MIGRATIONS } from './migrations.js';
import {
  nextTimestamp,
  runtimeFromRow,
  runtimeToRow,
  sessionFromRow,
  sessionToRow,
  type RuntimeRecord,
  type RuntimeRow,
  type SessionRecord,
  type SessionRow,
} from './records.js';
import { decryptSecret, encryptSecret, loadOrCreateKey, SECRET_KEY_FILE } from './secrets.js';

const DATABASE_FILE = 'berth.db';

/**
 * Makes the database and its WAL/SHM files mode 0600 whatever the umask: the database is created
 * (or narrowed) before SQLite opens it, and SQLite creates `-wal`/`-shm` with the database's mode.
 */
function restrictDatabaseFiles(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(path)) chmodSync(path, 0o600);
}

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

/** A runtime row write: `updatedAt`/`createdAt` are assigned by the store. */
type RuntimeUpsert = Omit<RuntimeRecord, 'createdAt' | 'updatedAt'>;

export class InventoryStore {
  readonly #db: Database.Database;
  readonly #now: () => Date;
  readonly #keyPath: string;
  readonly #metadataKeyPrefixes: readonly string[];
  #key: Buffer | null = null;

  private constructor(db: Database.Database, stateDir: string, now: () => Date, metadataKeyPrefixes: readonly string[]) {
    this.#db = db;
    this.#now = now;
    this.#metadataKeyPrefixes = metadataKeyPrefixes;
    this.#keyPath = join(stateDir, SECRET_KEY_FILE);
  }

  /** Opens (creating if needed) the inventory in `dataDir` and applies pending migrations. Throws InventoryOpenError. */
  static open(opts: InventoryStoreOptions): InventoryStore {
    const { dataDir } = opts;
    try {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      accessSync(dataDir, fsConstants.W_OK);
    } catch (err) {
      const code = errnoCode(err);
      const detail = code === 'EACCES' || code === 'EROFS' || code === 'EPERM' ? 'the data dir is not writable' : (code ?? errorMessage(err));
      throw new InventoryOpenError(dataDir, `${detail} (choose a writable --data-dir)`, { cause: err });
    }
    let stateDir: string;
    try {
      stateDir = ensureStateDir(dataDir);
    } catch (err) {
      throw new InventoryOpenError(dataDir, errorMessage(err), { cause: err });
    }
    const file = join(stateDir, DATABASE_FILE);
    let db: Database.Database;
    try {
      restrictDatabaseFiles(file);
      db = new Database(file);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
      db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
      migrate(db);
    } catch (err) {
      throw new InventoryOpenError(file, errorMessage(err), { cause: err });
    }
    return new InventoryStore(db, stateDir, opts.now ?? (() => new Date()), [...(opts.metadataKeyPrefixes ?? [])]);
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }

  /** The applied schema version (the highest migration number). */
  schemaVersion(): number {
    const row = this.#db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
    return row.v ?? 0;
  }

  // ---- sessions -------------------------------------------------------------------------------

  insertSession(record: Omit<SessionRecord, 'createdAt' | 'updatedAt'>): SessionRecord {
    const at = this.#now().toISOString();
    const full: SessionRecord = { ...record, createdAt: at, updatedAt: at };
    this.#db
      .prepare(
        `INSERT INTO sessions (id, name, executor, agent, repository, request, state, error, stages, workspace_path, created_at, updated_at)
         VALUES (@id, @name, @executor, @agent, @repository, @request, @state, @error, @stages, @workspace_path, @created_at, @updated_at)`,
      )
      .run(sessionToRow(full));
    return full;
  }

  getSession(id: string): SessionRecord | null {
    const row = this.#db.prepare('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow | undefined;
    return row ? sessionFromRow(row) : null;
  }

  listSessions(): SessionRecord[] {
    const rows = this.#db.prepare('SELECT * FROM sessions ORDER BY created_at, id').all() as SessionRow[];
    return rows.map(sessionFromRow);
  }

  /** Updates the mutable fields of a session; returns the new record, or null when it does not exist. */
  updateSession(
    id: string,
    patch: Partial<Pick<SessionRecord, 'state' | 'error' | 'stages' | 'workspacePath' | 'name'>>,
  ): SessionRecord | null {
    const tx = this.#db.transaction(() => {
      const current = this.getSession(id);
      if (!current) return null;
      const next: SessionRecord = { ...current, ...patch, updatedAt: nextTimestamp(current.updatedAt, this.#now()) };
      const row = sessionToRow(next);
      this.#db
        .prepare('UPDATE sessions SET name=@name, state=@state, error=@error, stages=@stages, workspace_path=@workspace_path, updated_at=@updated_at WHERE id=@id')
        .run(row);
      return next;
    });
    return tx.immediate();
  }

  /** Deletes a session, its runtime row and the secrets that row references. */
  deleteSession(id: string): void {
    const tx = this.#db.transaction(() => {
      const runtime = this.getRuntime(id);
      if (runtime) for (const secretId of Object.values(runtime.secretRefs)) this.deleteSecret(secretId);
      this.#db.prepare('DELETE FROM runtime_inventory WHERE session_id = ?').run(id);
      this.#db.prepare('DELETE FROM sessions WHERE id = ?').run(id);
    });
    tx.immediate();
  }

  // ---- runtime inventory ----------------------------------------------------------------------

  getRuntime(sessionId: string): RuntimeRecord | null {
    const row = this.#db.prepare('SELECT * FROM runtime_inventory WHERE session_id = ?').get(sessionId) as RuntimeRow | undefined;
    return row ? runtimeFromRow(row) : null;
  }

  listRuntime(): RuntimeRecord[] {
    const rows = this.#db.prepare('SELECT * FROM runtime_inventory ORDER BY session_id').all() as RuntimeRow[];
    return rows.map(runtimeFromRow);
  }

  /**
   * Writes the runtime row of a session (one per session). A row of another instance is replaced only
   * when `replaceInstance` names it, so a stale launch cannot overwrite a newer one.
   */
  upsertRuntime(record: RuntimeUpsert, opts: { replaceInstance?: string } = {}): RuntimeRecord {
    const tx = this.#db.transaction(() => {
      const current = this.getRuntime(record.sessionId);
      if (current && current.instanceId !== record.instanceId && current.instanceId !== opts.replaceInstance) {
        throw new InventoryConflictError(record.sessionId, record.instanceId, `the row belongs to instance '${current.instanceId}'`);
      }
      const now = this.#now();
      const full: RuntimeRecord = {
        ...record,
        createdAt: current?.instanceId === record.instanceId ? current.createdAt : now.toISOString(),
        updatedAt: nextTimestamp(current?.updatedAt ?? null, now),
      };
      this.#db
        .prepare(
          `INSERT INTO runtime_inventory (session_id, instance_id, executor, state, metadata, stages, secret_refs, created_at, updated_at)
           VALUES (@session_id, @instance_id, @executor, @state, @metadata, @stages, @secret_refs, @created_at, @updated_at)
           ON CONFLICT(session_id) DO UPDATE SET instance_id=excluded.instance_id, executor=excluded.executor, state=excluded.state,
             metadata=excluded.metadata, stages=excluded.stages, secret_refs=excluded.secret_refs,
             created_at=excluded.created_at, updated_at=excluded.updated_at`,
        )
        .run(runtimeToRow(full, this.#metadataKeyPrefixes));
      return runtimeFromRow(runtimeToRow(full, this.#metadataKeyPrefixes));
    });
    return tx.immediate();
  }

  /**
   * Compare-and-swap delete of a runtime row on (session, instance, updated_at). A missing row is
   * fine (already released); a row of another instance or a newer version throws InventoryConflictError.
   */
  releaseRuntime(sessionId: string, instanceId: string, updatedAt: string): void {
    const tx = this.#db.transaction(() => {
      const current = this.getRuntime(sessionId);
      if (!current) return;
      if (current.instanceId !== instanceId) {
        throw new InventoryConflictError(sessionId, instanceId, `rotated to instance '${current.instanceId}'`);
      }
      const res = this.#db
        .prepare('DELETE FROM runtime_inventory WHERE session_id = ? AND instance_id = ? AND updated_at = ?')
        .run(sessionId, instanceId, updatedAt);
      if (res.changes !== 1) {
        throw new InventoryConflictError(sessionId, instanceId, `updated since ${updatedAt} (now ${current.updatedAt})`);
      }
    });
    tx.immediate();
  }

  // ---- secrets --------------------------------------------------------------------------------

  /**
   * Encrypts and stores a secret under `id` (replacing an existing one); returns the id. Ids are
   * chosen by the caller and derived from the owner (e.g. `agentctl-auth-<instance id>`), so a
   * secret written just before a crash can still be found and deleted by its owner's id.
   */
  putSecret(id: string, plaintext: string): string {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/.test(id)) throw new SecretStoreError(id, 'invalid secret id');
    const enc = encryptSecret(this.#secretKey(), id, plaintext);
    this.#db
      .prepare('INSERT OR REPLACE INTO secrets (id, ciphertext, iv, tag, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(id, enc.ciphertext, enc.iv, enc.tag, this.#now().toISOString());
    return id;
  }

  /** Decrypts a stored secret. Throws SecretStoreError when missing or tampered. */
  revealSecret(id: string): string {
    const row = this.#db.prepare('SELECT ciphertext, iv, tag FROM secrets WHERE id = ?').get(id) as
      | { ciphertext: Buffer; iv: Buffer; tag: Buffer }
      | undefined;
    if (!row) throw new SecretStoreError(id, 'not found');
    return decryptSecret(this.#secretKey(), id, row);
  }

  deleteSecret(id: string): void {
    this.#db.prepare('DELETE FROM secrets WHERE id = ?').run(id);
  }

  /** Ids of every stored secret (tests and leak checks). */
  listSecretIds(): string[] {
    return (this.#db.prepare('SELECT id FROM secrets ORDER BY id').all() as { id: string }[]).map((r) => r.id);
  }

  #secretKey(): Buffer {
    this.#key ??= loadOrCreateKey(this.#keyPath);
    return this.#key;
  }
}

function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version));
  const newest = Math.max(0, ...applied);
  const known = Math.max(0, ...MIGRATIONS.map((m) => m.version));
  if (newest > known) {
    throw new Error(`database schema version ${newest} is newer than this berth (${known}); upgrade berth`);
  }
  for (const m of MIGRATIONS) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
    }).immediate();
  }
}
