/**
 * Reads the bootstrap nonce from its file and removes the file at once, so the nonce lives only in
 * agentctl's memory: never in an environment (agentctl's own, its start command's, PID 1's) and not
 * on disk once read. The file is opened without following links and must be a small regular file.
 * @module
 */
import { unlinkSync } from 'node:fs';
import { ENV } from '../protocol/index.js';
import { readConfinedTailSync, UnsafeFileError } from '../shared/confined-read.js';
import { ConfigFieldError } from '../shared/config-field-error.js';

/** A nonce file larger than this is refused (Berth's nonces are 64 characters). */
const MAX_NONCE_FILE_BYTES = 512;
/** Shortest accepted nonce, as for the environment variable. */
const MIN_NONCE_LENGTH = 16;

/**
 * The nonce in `path` (trailing whitespace dropped), the file removed; `null` when there is no file.
 * @throws ConfigFieldError (ENV.bootstrapNonceFile) for a link, a non-regular file or a bad value;
 *   the value itself is never shown.
 */
export function takeNonceFile(path: string): string | null {
  let data: Buffer | null;
  try {
    // one byte over the limit tells a file that is too large
    data = readConfinedTailSync(path, MAX_NONCE_FILE_BYTES + 1);
  } catch (err) {
    remove(path);
    if (err instanceof UnsafeFileError) throw new ConfigFieldError(ENV.bootstrapNonceFile, `${path} must be a regular file (${err.reason})`);
    throw new ConfigFieldError(ENV.bootstrapNonceFile, `cannot open ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (data === null) return null;
  // removed whatever it held: a nonce read once must not be readable again
  remove(path);
  if (data.length > MAX_NONCE_FILE_BYTES) throw new ConfigFieldError(ENV.bootstrapNonceFile, `${path} must be at most ${MAX_NONCE_FILE_BYTES} bytes`);
  const text = data.toString('utf8').trimEnd();
  if (text.length < MIN_NONCE_LENGTH) throw new ConfigFieldError(ENV.bootstrapNonceFile, `must hold a nonce of at least ${MIN_NONCE_LENGTH} characters`);
  return text;
}

function remove(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
