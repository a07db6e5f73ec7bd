/**
 * Opening the SQLite inventory's database file: the data dir checked writable, the file and its
 * WAL/SHM made owner-only, WAL with synchronous=FULL and foreign keys on, pending migrations applied.
 * @module
 */
import Database from 'better-sqlite3';
import { accessSync, chmodSync, closeSync, constants as fsConstants, existsSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { errnoCode, errorMessage } from '../shared/errors.js';
import { ensureStateDir } from '../shared/layout.js';
import { InventoryOpenError } from './errors.js';
import { migrateSqlite } from './migrations.js';

const DATABASE_FILE = 'berth.db';

/**
 * Makes the database and its WAL/SHM files mode 0600 whatever the umask: the database is created
 * (or narrowed) before SQLite opens it, and SQLite creates `-wal`/`-shm` with the database's mode.
 */
function restrictDatabaseFiles(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(path)) chmodSync(path, 0o600);
}

/** Opens (creating if needed) `<dataDir>/state/berth.db`, migrated; its state dir too. Throws InventoryOpenError. */
export function openSqliteDatabase(dataDir: string, busyTimeoutMs: number): { db: Database.Database; stateDir: string } {
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
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    migrateSqlite(db);
  } catch (err) {
    throw new InventoryOpenError(file, errorMessage(err), { cause: err });
  }
  return { db, stateDir };
}
