/**
 * The files `berth serve` keeps in the data dir, and how the CLI finds a running server:
 *  - `serve.lock`: created with O_EXCL, holds the serving pid and its start time (one writer per data dir);
 *  - `state/api-token`: the bearer token (mode 0600, 256 random bits, new on every start unless
 *    `--token-file` gives it), beside the inventory in the private `state/` dir (shared/layout.ts);
 *  - `serve.json`: `{pid, port, startedAt}` of the running server.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ensureStateDir, STATE_DIR } from '../shared/layout.js';
import { procStartTime } from '../shared/proc.js';

export const LOCK_FILE = 'serve.lock';
const TOKEN_FILE = 'api-token';
const SERVE_INFO_FILE = 'serve.json';

/** Where the API token of `dataDir` is: `<dataDir>/state/api-token`. */
function apiTokenPath(dataDir: string): string {
  return join(dataDir, STATE_DIR, TOKEN_FILE);
}

export { resolveDataDir } from './data-dir-path.js';

/** Thrown when another live `berth serve` holds the data dir. */
export class ServeLockedError extends Error {
  override readonly name = 'ServeLockedError';
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `another berth serve (pid ${pid}) is already running on data dir ${dataDir}; stop it first or use another --data-dir ` +
        `(if pid ${pid} is not berth, remove ${dataDir}/${LOCK_FILE})`,
    );
  }
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What `serve.lock` holds: the pid and, where /proc exists, its start time (the pid-reuse guard). */
function lockContent(pid: number): string {
  const start = procStartTime(pid);
  return start === null ? String(pid) : `${pid} ${start}`;
}

/**
 * True while the process that wrote `content` still runs. A pid that is alive but started at
 * another time than recorded is a reused pid (e.g. after a reboot): the lock is stale.
 */
function holderAlive(content: string): boolean {
  const [pidText, start] = content.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!pidAlive(pid)) return false;
  if (start === undefined) return true;
  const now = procStartTime(pid);
  return now === null || now === start;
}

/**
 * Takes the single-writer lock of `dataDir`; a lock left by a dead process is taken over.
 * Returns the release function. Throws ServeLockedError while a live server holds it.
 */
export function acquireServeLock(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, LOCK_FILE);
  const mine = lockContent(process.pid);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, mine);
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(path, 'utf8').trim() === mine) rmSync(path, { force: true });
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let held: string;
    try {
      held = readFileSync(path, 'utf8').trim();
    } catch {
      continue; // removed meanwhile: retry
    }
    if (holderAlive(held)) throw new ServeLockedError(dataDir, Number(held.split(/\s+/)[0]));
    takeOverStale(path, held);
  }
  throw new Error(`could not take the lock ${path}; remove it if no berth serve is running`);
}

/**
 * Moves the stale lock (content `stale`) out of the way. Another server may have taken it over and
 * written its own live lock between our read and the rename: then the moved file is that live lock,
 * and it is put back (link fails rather than overwrite when yet another lock appeared meanwhile).
 */
function takeOverStale(path: string, stale: string): void {
  const moved = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, moved);
  } catch {
    return; // gone already: the next O_EXCL attempt decides
  }
  try {
    const content = readFileSync(moved, 'utf8').trim();
    if (content !== stale) {
      try {
        linkSync(moved, path);
      } catch {
        // a third server created a lock meanwhile; it decides the next attempt
      }
    }
  } finally {
    rmSync(moved, { force: true });
  }
}

/**
 * Writes the API token (mode 0600, atomically) and returns it: `token` (`--token-file`, so every
 * start and every replica has the same) or a fresh random one.
 */
export function writeApiToken(dataDir: string, token: string = randomBytes(32).toString('base64url')): string {
  const path = join(ensureStateDir(dataDir), TOKEN_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${token}\n`, { mode: 0o600 });
  renameSync(tmp, path);
  return token;
}

const ServeInfoSchema = z.object({
  pid: z.number().int(),
  port: z.number().int().min(1).max(65535),
  startedAt: z.string(),
  /** The `--host` serve bound, as in a URL (absent: 127.0.0.1). */
  host: z.string().optional(),
});
type ServeInfo = z.infer<typeof ServeInfoSchema>;

export function writeServeInfo(dataDir: string, info: ServeInfo): void {
  const path = join(dataDir, SERVE_INFO_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(info)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

export function removeServeInfo(dataDir: string): void {
  rmSync(join(dataDir, SERVE_INFO_FILE), { force: true });
}

/** What a client needs to reach the server of `dataDir`, or null when none is recorded as running. */
export function discoverServer(dataDir: string): { baseUrl: string; token: string; info: ServeInfo } | null {
  let info: ServeInfo;
  let token: string;
  try {
    info = ServeInfoSchema.parse(JSON.parse(readFileSync(join(dataDir, SERVE_INFO_FILE), 'utf8')));
    token = readTokenFile(dataDir);
  } catch {
    return null;
  }
  if (!pidAlive(info.pid)) return null;
  // A wildcard bind answers on loopback too; a specific address only there.
  const host = info.host === undefined || info.host === '0.0.0.0' || info.host === '[::]' ? '127.0.0.1' : info.host;
  return { baseUrl: `http://${host}:${info.port}`, token, info };
}

/** The token file; a server still running from before the `state/` layout wrote it at the top level. */
function readTokenFile(dataDir: string): string {
  try {
    return readFileSync(apiTokenPath(dataDir), 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return readFileSync(join(dataDir, TOKEN_FILE), 'utf8').trim();
  }
}
