/** The inventory contract against the SQLite store (a fresh data dir per case). */
import Database from 'better-sqlite3';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { Inventory } from '../../../src/inventory/inventory.js';
import { InventoryStore } from '../../../src/inventory/store.js';
import { inventoryContract, type ContractDatabase } from './contract.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function fresh(): Promise<ContractDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'berth-contract-'));
  dirs.push(dataDir);
  const state = join(dataDir, 'state');
  const open = async (opts: { now?: () => Date } = {}): Promise<Inventory> => InventoryStore.open({ dataDir, metadataKeyPrefixes: ['local_'], ...opts });
  return {
    open,
    // the database file and its WAL, as bytes: a plaintext anywhere in them is a leak
    dump: async () =>
      readdirSync(state)
        .filter((f) => f.startsWith('berth.db'))
        .map((f) => readFileSync(join(state, f)).toString('latin1'))
        .join('\n'),
    count: async (table) => {
      const db = new Database(join(state, 'berth.db'), { readonly: true });
      try {
        return (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
      } finally {
        db.close();
      }
    },
    restart: async (store) => {
      await store.close();
      return open();
    },
  };
}

inventoryContract('sqlite', fresh);
