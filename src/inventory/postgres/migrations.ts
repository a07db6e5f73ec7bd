/**
 * Versioned schema migrations of the Postgres inventory. Append only: a released migration is never
 * edited, a change is a new numbered entry. The versions match SQLite's (../migrations.ts) one for
 * one, so `schemaVersion()` means the same on both backends.
 *
 * Columns hold what SQLite holds (JSON as TEXT, ISO timestamps as TEXT), so both backends share the
 * row mapping of records.ts. Keys and timestamps sort by code point (`COLLATE "C"`), as in SQLite.
 * @module
 */
import { newerSchemaError, type Migration } from '../migrations.js';
import type { Query } from './runner.js';

const PG_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions, runtime inventory, secrets',
    sql: `
      CREATE TABLE sessions (
        id             TEXT COLLATE "C" PRIMARY KEY,
        name           TEXT,
        executor       TEXT NOT NULL,
        agent          TEXT NOT NULL,
        repository     TEXT NOT NULL,
        request        TEXT NOT NULL,
        state          TEXT NOT NULL,
        error          TEXT,
        stages         TEXT NOT NULL,
        workspace_path TEXT,
        created_at     TEXT COLLATE "C" NOT NULL,
        updated_at     TEXT COLLATE "C" NOT NULL
      );
      CREATE TABLE runtime_inventory (
        session_id     TEXT COLLATE "C" PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        instance_id    TEXT NOT NULL UNIQUE,
        executor       TEXT NOT NULL,
        state          TEXT NOT NULL,
        metadata       TEXT NOT NULL,
        stages         TEXT NOT NULL,
        secret_refs    TEXT NOT NULL,
        created_at     TEXT COLLATE "C" NOT NULL,
        updated_at     TEXT COLLATE "C" NOT NULL
      );
      CREATE TABLE secrets (
        id             TEXT COLLATE "C" PRIMARY KEY,
        ciphertext     BYTEA NOT NULL,
        iv             BYTEA NOT NULL,
        tag            BYTEA NOT NULL,
        created_at     TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'fence',
    sql: `
      CREATE TABLE fence (
        id             INTEGER PRIMARY KEY CHECK (id = 1),
        holder         TEXT NOT NULL,
        generation     BIGINT NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'settings',
    sql: `
      CREATE TABLE settings (
        key            TEXT COLLATE "C" PRIMARY KEY,
        value          TEXT NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'pool members',
    sql: `
      CREATE TABLE pool_members (
        id             TEXT COLLATE "C" PRIMARY KEY,
        executor       TEXT NOT NULL,
        profile        TEXT NOT NULL,
        profile_hash   TEXT NOT NULL,
        state          TEXT NOT NULL,
        session_id     TEXT,
        metadata       TEXT NOT NULL,
        secret_refs    TEXT NOT NULL,
        created_at     TEXT COLLATE "C" NOT NULL,
        updated_at     TEXT COLLATE "C" NOT NULL
      );
      CREATE INDEX pool_members_claim ON pool_members (executor, profile, state, created_at);
    `,
  },
  {
    version: 5,
    name: 'recorded output',
    sql: `
      CREATE TABLE recorded_output (
        session_id     TEXT COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        process_id     TEXT COLLATE "C" NOT NULL,
        run_order      BIGINT NOT NULL,
        bytes          BIGINT NOT NULL,
        chunks         TEXT NOT NULL,
        updated_at     TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (session_id, process_id)
      );
    `,
  },
  {
    version: 6,
    // batch_id (Postgres only): the append that wrote the row, so a retried append whose first
    // attempt committed writes nothing twice (postgres/egress.ts)
    name: 'egress',
    sql: `
      CREATE TABLE egress_credentials (
        session_id     TEXT COLLATE "C" PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        token_digest   TEXT COLLATE "C" NOT NULL UNIQUE,
        policy         TEXT NOT NULL,
        created_at     TEXT COLLATE "C" NOT NULL
      );
      CREATE TABLE egress_records (
        seq            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id     TEXT COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        host           TEXT NOT NULL,
        port           INTEGER NOT NULL,
        method         TEXT NOT NULL,
        allowed        INTEGER NOT NULL,
        reason         TEXT,
        status         INTEGER,
        bytes_up       BIGINT NOT NULL,
        bytes_down     BIGINT NOT NULL,
        started_at     BIGINT NOT NULL,
        ended_at       BIGINT NOT NULL,
        broker         TEXT,
        input_tokens   BIGINT,
        output_tokens  BIGINT,
        batch_id       TEXT COLLATE "C" NOT NULL
      );
      CREATE INDEX egress_records_session ON egress_records (session_id, seq);
      CREATE INDEX egress_records_batch ON egress_records (batch_id);
    `,
  },
];

/** The advisory lock every migrating controller takes: a second one starting at once waits its turn. */
const MIGRATION_LOCK = '7310575183335145331';

/**
 * Applies the pending migrations inside the caller's transaction, under a transaction-scoped advisory
 * lock: two controllers starting at once apply each migration once (the second finds them applied).
 * Refuses a database written by a newer berth.
 */
export async function migratePostgres(query: Query): Promise<void> {
  await query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK]);
  await query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set((await query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version));
  const newer = newerSchemaError(Math.max(0, ...applied), PG_MIGRATIONS);
  if (newer) throw newer;
  for (const m of PG_MIGRATIONS) {
    if (applied.has(m.version)) continue;
    await query(m.sql);
    await query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, new Date().toISOString()]);
  }
}

/** The schema version this berth writes (`berth doctor` compares a database's with it). */
export const PG_SCHEMA_VERSION = Math.max(...PG_MIGRATIONS.map((m) => m.version));
