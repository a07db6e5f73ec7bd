/**
 * The data dir held for as long as `berth serve` runs, by a lock the kernel keeps: an exclusive
 * SQLite transaction on `<data dir>/state/serve.hold` (an fcntl lock, released however the process
 * ends). The pid lock (data-dir.ts) cannot see a holder in another container: when a controller Pod
 * is deleted its ReplicaSet starts the next one at once, on the same volume, while the old one is
 * still shutting down, and both are pid 1. The kernel lock is seen by every process of the machine
 * sharing the volume, so the new controller waits until the old one has let go, and never acts on a
 * session beside it.
 * @module
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { ensureStateDir } from '../shared/layout.js';

const HOLD_FILE = 'serve.hold';
const POLL_MS = 250;

interface HoldOptions {
  /** Called once, the first time the lock is found taken (serve says what it waits for). */
  onWait?: () => void;
  signal?: AbortSignal;
}

/** Takes the data dir's kernel lock, waiting while another process holds it; returns the release. */
export async function holdDataDir(dataDir: string, opts: HoldOptions = {}): Promise<() => void> {
  const db = new Database(join(ensureStateDir(dataDir), HOLD_FILE));
  // never block the event loop on the lock (the probes must answer while this waits)
  db.pragma('busy_timeout = 0');
  let told = false;
  try {
    for (;;) {
      try {
        db.exec('BEGIN EXCLUSIVE');
        return () => {
          if (db.open) db.close();
        };
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
      }
      if (!told) opts.onWait?.();
      told = true;
      opts.signal?.throwIfAborted();
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } catch (err) {
    db.close();
    throw err;
  }
}
