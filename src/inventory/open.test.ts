import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InventoryOpenError } from './errors.js';
import { openInventory } from './open.js';

const postgres = { backend: 'postgres', urlEnv: 'BERTH_DATABASE_URL', secretKeyEnv: 'BERTH_SECRET_KEY' } as const;
const KEY = Buffer.alloc(32, 7).toString('base64');

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('openInventory', () => {
  it('opens the SQLite store in the data dir by default', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'berth-open-'));
    dirs.push(dataDir);
    const store = await openInventory({ dataDir, store: { backend: 'sqlite' }, env: {} });
    expect(store.backend).toBe('sqlite');
    await store.putSecret('k', 'v');
    expect(await store.revealSecret('k')).toBe('v');
    await store.close();
  });

  it('says which setting and variable to fix when the connection string is not set', async () => {
    const open = openInventory({ dataDir: '/nonexistent', store: postgres, env: { BERTH_SECRET_KEY: KEY } });
    await expect(open).rejects.toThrow(InventoryOpenError);
    await expect(open).rejects.toThrow(/store\.url_env: the environment variable BERTH_DATABASE_URL is not set; set it to/);
  });

  it('refuses a missing or malformed secrets key without echoing it', async () => {
    const env = { BERTH_DATABASE_URL: 'postgresql://u:pw@127.0.0.1:1/db' };
    await expect(openInventory({ dataDir: '/x', store: postgres, env })).rejects.toThrow(/store\.secret_key_env: the environment variable BERTH_SECRET_KEY is not set/);
    for (const bad of ['c2hvcnQta2V5', 'not base64 at all!', Buffer.alloc(33).toString('base64')]) {
      const err = await openInventory({ dataDir: '/x', store: postgres, env: { ...env, BERTH_SECRET_KEY: bad } }).catch((e: unknown) => e as Error);
      expect(err).toBeInstanceOf(InventoryOpenError);
      expect((err as Error).message).toMatch(/BERTH_SECRET_KEY must hold base64 of exactly 32 bytes/);
      expect((err as Error).message).not.toContain(bad);
    }
  });
});
