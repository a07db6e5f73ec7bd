/**
 * Encryption of secrets at rest: AES-256-GCM with a random 96-bit IV per secret, the secret id as
 * additional authenticated data (a ciphertext moved to another id fails to decrypt). The 32-byte key
 * is a file (mode 0600) in the data dir, created on first use, for SQLite; for Postgres it comes from
 * an environment variable (base64), since every controller replica sharing the database needs it.
 * @module
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, writeSync } from 'node:fs';
import { errnoCode } from '../shared/errors.js';
import { SecretStoreError } from './errors.js';

export const SECRET_KEY_FILE = 'secret.key';
const KEY_BYTES = 32;
const IV_BYTES = 12;

interface EncryptedSecret {
  ciphertext: Buffer;
  iv: Buffer;
  tag: Buffer;
}

export function encryptSecret(key: Buffer, secretId: string, plaintext: string): EncryptedSecret {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(secretId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { ciphertext, iv, tag: cipher.getAuthTag() };
}

/** Throws SecretStoreError when the ciphertext, IV, tag or id were tampered with or the key differs. */
export function decryptSecret(key: Buffer, secretId: string, secret: EncryptedSecret): string {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, secret.iv);
    decipher.setAAD(Buffer.from(secretId, 'utf8'));
    decipher.setAuthTag(secret.tag);
    return Buffer.concat([decipher.update(secret.ciphertext), decipher.final()]).toString('utf8');
  } catch (err) {
    throw new SecretStoreError(secretId, 'cannot decrypt (tampered, or encrypted with another secret.key)', { cause: err });
  }
}

/**
 * Reads the key file, creating it (O_EXCL, mode 0600) when absent. Refuses a key file that other
 * users can read or that has the wrong size, instead of silently using it.
 */
export function loadOrCreateKey(path: string): Buffer {
  try {
    const fd = openSync(path, 'wx', 0o600);
    try {
      const key = randomBytes(KEY_BYTES);
      writeSync(fd, key);
      return key;
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') {
      throw new SecretStoreError(null, `cannot create key file ${path}: ${errnoCode(err) ?? 'error'}`, { cause: err });
    }
  }
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    if ((st.mode & 0o077) !== 0) {
      throw new SecretStoreError(null, `key file ${path} is accessible by other users (mode ${(st.mode & 0o777).toString(8)}); run: chmod 600 ${path}`);
    }
    const key = readFileSync(fd);
    if (key.length !== KEY_BYTES) {
      throw new SecretStoreError(null, `key file ${path} must hold exactly ${KEY_BYTES} bytes (found ${key.length})`);
    }
    return key;
  } finally {
    closeSync(fd);
  }
}

/**
 * The key given as text (base64 of 32 bytes), as replicas sharing one database share their key; null
 * when it is not that (the problem, never the value, is for the caller to report).
 */
export function keyFromBase64(text: string): Buffer | null {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) && !/^[A-Za-z0-9_-]+={0,2}$/.test(trimmed)) return null;
  const key = Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64');
  return key.length === KEY_BYTES ? key : null;
}
