/**
 * The installation id: a random identifier of one data dir (one Berth), kept in
 * `<data dir>/state/installation-id`. The Kubernetes executor stamps it on every object it creates,
 * so its sweep of unrecorded objects can tell its own from another Berth's sharing the namespace.
 * It proves nothing to anyone else and is not a secret (anyone who may create Pods in the namespace
 * may delete them too).
 * @module
 */
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { errnoCode } from './errors.js';
import { ensureStateDir, STATE_DIR } from './layout.js';

const INSTALLATION_ID_FILE = 'installation-id';

/** 128 random bits, hex: a valid Kubernetes label and annotation value. */
const FORMAT = /^[0-9a-f]{32}$/;

/** Thrown when the file exists but does not hold an installation id. */
export class InstallationIdError extends Error {
  override readonly name = 'InstallationIdError';
}

/** The data dir's installation id, or null when it has none yet (nothing was created in its name). */
export function readInstallationId(dataDir: string): string | null {
  const path = join(dataDir, STATE_DIR, INSTALLATION_ID_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw err;
  }
  const id = text.trim();
  if (!FORMAT.test(id)) throw new InstallationIdError(`${path} does not hold an installation id (32 hex digits); restore it from a backup, or remove it to start a new one (objects stamped with the old one are then another Berth's)`);
  return id;
}

/**
 * The data dir's installation id, created on first use. Two processes creating it at once agree:
 * the file appears whole or not at all (a hard link of a finished temporary file), and the loser reads the winner's.
 */
export function ensureInstallationId(dataDir: string): string {
  const existing = readInstallationId(dataDir);
  if (existing !== null) return existing;
  const path = join(ensureStateDir(dataDir), INSTALLATION_ID_FILE);
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, `${randomBytes(16).toString('hex')}\n`, { mode: 0o600 });
  try {
    linkSync(tmp, path);
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  const id = readInstallationId(dataDir);
  if (id === null) throw new InstallationIdError(`${path} vanished while it was created`);
  return id;
}
