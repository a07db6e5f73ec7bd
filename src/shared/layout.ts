/**
 * The data dir's layout: the secrets (`berth.db` and its WAL/SHM, `secret.key`, `api-token`) live
 * in `<data dir>/state/` (mode 0700), apart from `workspaces/`, so no workspace lies inside the
 * directory holding them and no `../../../api-token` reaches one from an agent's checkout. Data dirs
 * of the earlier flat layout are migrated once, by renames within the data dir.
 * @module
 */
import { chmodSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';

/** The private directory of the data dir. */
export const STATE_DIR = 'state';

/** Files that moved from the data dir's top level into `state/`; the database last (it decides "migrated"). */
const MOVED = ['secret.key', 'api-token', 'berth.db-wal', 'berth.db-shm', 'berth.db'] as const;

/** Thrown when the data dir holds both layouts and which one is current cannot be told safely. */
export class DataDirLayoutError extends Error {
  override readonly name = 'DataDirLayoutError';
  constructor(
    readonly dataDir: string,
    detail: string,
  ) {
    super(`data dir ${dataDir}: ${detail}`);
  }
}

/** `<dataDir>/state`, created (mode 0700) and migrated from the flat layout when needed. */
export function ensureStateDir(dataDir: string): string {
  const state = join(dataDir, STATE_DIR);
  mkdirSync(state, { recursive: true, mode: 0o700 });
  // mkdir's mode is subject to the umask and does not touch an existing directory
  chmodSync(state, 0o700);
  migrateFlatLayout(dataDir, state);
  return state;
}

/**
 * Moves the files of a flat-layout data dir into `state/`. Only ever called by the one process that
 * opens the inventory (under `berth serve`'s lock, or a test's private dir), before SQLite opens
 * the database: renaming the WAL with the database keeps committed transactions. Resumable: a crash
 * between renames leaves the old `berth.db` in place, so the next call finishes the move.
 */
function migrateFlatLayout(dataDir: string, state: string): void {
  if (!existsSync(join(dataDir, 'berth.db'))) return;
  if (existsSync(join(state, 'berth.db'))) {
    throw new DataDirLayoutError(
      dataDir,
      `both berth.db and ${STATE_DIR}/berth.db exist; keep the one you want in ${STATE_DIR}/ (with its -wal/-shm and secret.key) and move the other away`,
    );
  }
  for (const name of MOVED) {
    const from = join(dataDir, name);
    if (existsSync(from)) renameSync(from, join(state, name));
  }
}
