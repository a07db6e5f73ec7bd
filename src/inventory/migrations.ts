/**
 * Versioned schema migrations of the inventory database. Append only: a released migration is
 * never edited, a change is a new numbered entry. (Postgres has its own list: postgres/migrations.ts.)
 * @module
 */
import type Database from 'better-sqlite3';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions, runtime inventory, secrets',
    sql: `
      CREATE TABLE sessions (
        id            TEXT PRIMARY KEY,
        name          TEXT,
        executor      TEXT NOT NULL,
        agent         TEXT NOT NULL,
        repository    TEXT NOT NULL,          -- JSON RepositoryRef
        request       TEXT NOT NULL,          -- JSON {env, secretEnv (names only), prompt}
        state         TEXT NOT NULL,
        error         TEXT,                   -- JSON {message, stage} (sanitized)
        stages        TEXT NOT NULL,          -- JSON StageRecord[] of the latest launch/resume
        workspace_path TEXT,
        created_at    TEXT NOT NULL,
        updated_at    TEXT NOT NULL
      );
      CREATE TABLE runtime_inventory (
        session_id    TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        instance_id   TEXT NOT NULL UNIQUE,
        executor      TEXT NOT NULL,
        state         TEXT NOT NULL,          -- executor checkpoint state, then ready/stopped/failed
        metadata      TEXT NOT NULL,          -- JSON, persistable keys only
        stages        TEXT NOT NULL,          -- JSON stage timings
        secret_refs   TEXT NOT NULL,          -- JSON {name: secret id}
        created_at    TEXT NOT NULL,
        updated_at    TEXT NOT NULL
      );
      CREATE TABLE secrets (
        id            TEXT PRIMARY KEY,
        ciphertext    BLOB NOT NULL,
        iv            BLOB NOT NULL,
        tag           BLOB NOT NULL,
        created_at    TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'fence',
    sql: `
      CREATE TABLE fence (
        id            INTEGER PRIMARY KEY CHECK (id = 1),   -- one row: the writer of record
        holder        TEXT NOT NULL,
        generation    INTEGER NOT NULL
      );
    `,
  },
  {
    version: 3,
    // Postgres keeps the installation id here; SQLite keeps it in state/installation-id (read by
    // `berth doctor` and earlier versions), so the table stays empty: it exists so that schema
    // versions mean the same on both backends.
    name: 'settings',
    sql: `
      CREATE TABLE settings (
        key           TEXT PRIMARY KEY,
        value         TEXT NOT NULL
      );
    `,
  },
  {
    version: 4,
    // no foreign key to sessions: a claimed member's session row may be written after the claim
    name: 'pool members',
    sql: `
      CREATE TABLE pool_members (
        id            TEXT PRIMARY KEY,
        executor      TEXT NOT NULL,
        profile       TEXT NOT NULL,
        profile_hash  TEXT NOT NULL,
        state         TEXT NOT NULL,          -- creating, ready, claimed
        session_id    TEXT,                   -- the session that claimed it
        metadata      TEXT NOT NULL,          -- JSON, persistable keys only
        secret_refs   TEXT NOT NULL,          -- JSON {name: secret id}
        created_at    TEXT NOT NULL,
        updated_at    TEXT NOT NULL
      );
      CREATE INDEX pool_members_claim ON pool_members (executor, profile, state, created_at);
    `,
  },
  {
    version: 5,
    // one row per mirrored agent run (output-records.ts): its last bytes, bounded, deleted with the session
    name: 'recorded output',
    sql: `
      CREATE TABLE recorded_output (
        session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        process_id    TEXT NOT NULL,
        run_order     INTEGER NOT NULL,       -- the order of writes within the session: the latest runs are kept
        bytes         INTEGER NOT NULL,       -- the bytes of output held
        chunks        TEXT NOT NULL,          -- JSON [{seq, stream, data (base64)}]
        updated_at    TEXT NOT NULL,
        PRIMARY KEY (session_id, process_id)
      );
    `,
  },
  {
    version: 6,
    // egress-records.ts: a session's proxy credential (its token's sha256 only) and its connection
    // records (the latest kept), deleted with the session; AUTOINCREMENT: a seq is never reused
    name: 'egress',
    sql: `
      CREATE TABLE egress_credentials (
        session_id    TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        token_digest  TEXT NOT NULL UNIQUE,   -- sha256 (hex) of the token
        policy        TEXT NOT NULL,          -- JSON, opaque to the store
        created_at    TEXT NOT NULL
      );
      CREATE TABLE egress_records (
        seq           INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        host          TEXT NOT NULL,
        port          INTEGER NOT NULL,
        method        TEXT NOT NULL,
        allowed       INTEGER NOT NULL,       -- 0 or 1
        reason        TEXT,
        status        INTEGER,
        bytes_up      INTEGER NOT NULL,
        bytes_down    INTEGER NOT NULL,
        started_at    INTEGER NOT NULL,       -- epoch ms
        ended_at      INTEGER NOT NULL,
        broker        TEXT,
        input_tokens  INTEGER,
        output_tokens INTEGER
      );
      CREATE INDEX egress_records_session ON egress_records (session_id, seq);
    `,
  },
];

/** The error of a database written by a newer berth: refused, never downgraded. */
export function newerSchemaError(newest: number, known: readonly Migration[]): Error | null {
  const max = Math.max(0, ...known.map((m) => m.version));
  return newest > max ? new Error(`database schema version ${newest} is newer than this berth (${max}); upgrade berth`) : null;
}

/** Applies the pending migrations, each in its own immediate transaction (another process waits). */
export function migrateSqlite(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version));
  const newer = newerSchemaError(Math.max(0, ...applied), MIGRATIONS);
  if (newer) throw newer;
  for (const m of MIGRATIONS) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      const done = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version);
      if (done !== undefined) return; // applied by another process meanwhile
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
    }).immediate();
  }
}
