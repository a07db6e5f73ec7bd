/**
 * Versioned schema migrations of the inventory database. Append only: a released migration is
 * never edited, a change is a new numbered entry.
 * @module
 */

interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
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
];
