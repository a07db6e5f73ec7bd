import { mkdtempSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SecretStoreError } from './errors.js';
import { decryptSecret, encryptSecret, loadOrCreateKey } from './secrets.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'berth-secrets-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('secret crypto', () => {
  it('creates a 32-byte key file with mode 0600 and reuses it', () => {
    const path = join(tempDir(), 'secret.key');
    const key = loadOrCreateKey(path);
    expect(key.length).toBe(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(loadOrCreateKey(path).equals(key)).toBe(true);
  });

  it('refuses a key file other users can read', () => {
    const path = join(tempDir(), 'secret.key');
    writeFileSync(path, Buffer.alloc(32, 1));
    chmodSync(path, 0o644);
    expect(() => loadOrCreateKey(path)).toThrow(SecretStoreError);
    expect(() => loadOrCreateKey(path)).toThrow(/chmod 600/);
  });

  it('refuses a key file of the wrong size', () => {
    const path = join(tempDir(), 'secret.key');
    writeFileSync(path, Buffer.alloc(16, 1), { mode: 0o600 });
    expect(() => loadOrCreateKey(path)).toThrow(/exactly 32 bytes/);
  });

  it('round-trips and does not contain the plaintext', () => {
    const key = loadOrCreateKey(join(tempDir(), 'secret.key'));
    const enc = encryptSecret(key, 'id-1', 'hunter2-token');
    expect(enc.ciphertext.toString('utf8')).not.toContain('hunter2');
    expect(decryptSecret(key, 'id-1', enc)).toBe('hunter2-token');
  });

  it.each([
    ['ciphertext', (e: ReturnType<typeof encryptSecret>) => ({ ...e, ciphertext: flip(e.ciphertext) }), 'id-1'],
    ['tag', (e: ReturnType<typeof encryptSecret>) => ({ ...e, tag: flip(e.tag) }), 'id-1'],
    ['iv', (e: ReturnType<typeof encryptSecret>) => ({ ...e, iv: flip(e.iv) }), 'id-1'],
    ['secret id (AAD)', (e: ReturnType<typeof encryptSecret>) => e, 'id-2'],
  ])('fails to decrypt when the %s is tampered with', (_what, tamper, id) => {
    const key = loadOrCreateKey(join(tempDir(), 'secret.key'));
    const enc = encryptSecret(key, 'id-1', 'hunter2-token');
    expect(() => decryptSecret(key, id, tamper(enc))).toThrow(SecretStoreError);
  });

  it('fails to decrypt with another key', () => {
    const enc = encryptSecret(loadOrCreateKey(join(tempDir(), 'k')), 'id-1', 'x');
    expect(() => decryptSecret(loadOrCreateKey(join(tempDir(), 'k')), 'id-1', enc)).toThrow(/another secret.key/);
  });
});

function flip(buf: Buffer): Buffer {
  const copy = Buffer.from(buf);
  copy[0] = (copy[0] ?? 0) ^ 0xff;
  return copy;
}
