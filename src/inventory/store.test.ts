import Database from 'better-sqlite3';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InventoryOpenError } from './errors.js';
import { InventoryStore } from './store.js';

const dirs: string[] = [];
const stores: InventoryStore[] = [];
function open(dataDir?: string): { store: InventoryStore; dir: string } {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'berth-store-'));
  dirs.push(dir);
  const store = InventoryStore.open({ dataDir: dir, metadataKeyPrefixes: ['local_'] });
  stores.push(store);
  return { store, dir };
}
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) {
    try {
      chmodSync(d, 0o700);
    } catch {
      /* already gone */
    }
    rmSync(d, { recursive: true, force: true });
  }
});

describe('InventoryStore', () => {
  it('applies migrations once and uses WAL with synchronous=FULL', async () => {
    const { store, dir } = open();
    expect(store.backend).toBe('sqlite');
    expect(await store.schemaVersion()).toBe(6);
    await store.close();
    const again = InventoryStore.open({ dataDir: dir });
    stores.push(again);
    expect(await again.schemaVersion()).toBe(6);
    const db = new Database(join(dir, 'state', 'berth.db'));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect((db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get() as { n: number }).n).toBe(6);
    db.close();
  });

  it('upgrades a version-1 database in place, keeping its rows', async () => {
    const { store, dir } = open();
    await store.close();
    const db = new Database(join(dir, 'state', 'berth.db'));
    db.exec('DROP TABLE fence; DELETE FROM schema_migrations WHERE version = 2');
    db.prepare("INSERT INTO secrets VALUES ('kept', x'00', x'00', x'00', 'x')").run();
    db.close();
    const upgraded = InventoryStore.open({ dataDir: dir });
    stores.push(upgraded);
    expect(await upgraded.schemaVersion()).toBe(6);
    expect(await upgraded.listSecretIds()).toEqual(['kept']);
    expect(await upgraded.claimFence({ holder: 'a', generation: 1 })).toBe(true);
  });

  it('keeps the database and its WAL readable by the owner only', async () => {
    const { store, dir } = open();
    await store.putSecret('s', 'v');
    for (const f of ['berth.db', 'berth.db-wal']) expect(statSync(join(dir, 'state', f)).mode & 0o777).toBe(0o600);
  });

  it('refuses a database written by a newer schema', async () => {
    const { store, dir } = open();
    await store.close();
    const db = new Database(join(dir, 'state', 'berth.db'));
    db.prepare("INSERT INTO schema_migrations VALUES (99, 'future', 'x')").run();
    db.close();
    expect(() => InventoryStore.open({ dataDir: dir })).toThrow(/schema version 99 is newer/);
  });

  it('fails with a clear error on a data dir it cannot write', () => {
    const base = mkdtempSync(join(tmpdir(), 'berth-ro-'));
    dirs.push(base);
    if (process.getuid?.() === 0) {
      // root ignores permission bits: a path below a regular file is unwritable for everyone
      writeFileSync(join(base, 'file'), 'x');
      expect(() => InventoryStore.open({ dataDir: join(base, 'file', 'data') })).toThrow(InventoryOpenError);
      return;
    }
    chmodSync(base, 0o500);
    expect(() => InventoryStore.open({ dataDir: base })).toThrow(/the data dir is not writable/);
  });

  it('stores secrets encrypted: the plaintext is not in the database file', async () => {
    const { store, dir } = open();
    const id = await store.putSecret('agentctl-auth-i-1', 'plain-token-value-123');
    expect(await store.revealSecret(id)).toBe('plain-token-value-123');
    await store.close();
    for (const f of ['berth.db', 'berth.db-wal']) {
      let content = '';
      try {
        content = readFileSync(join(dir, 'state', f)).toString('latin1');
      } catch {
        continue;
      }
      expect(content).not.toContain('plain-token-value-123');
    }
  });
});
