/**
 * The inventory contract against Postgres (a real server, a fresh database per case), and what only
 * Postgres has: a write issued while the server is down completes once it is back, and connection
 * errors never show the password.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InventoryOpenError, InventoryUnavailableError } from '../../../src/inventory/errors.js';
import type { Inventory } from '../../../src/inventory/inventory.js';
import { openInventory } from '../../../src/inventory/open.js';
import { appendRecords } from '../../../src/inventory/postgres/egress.js';
import { PgRunner } from '../../../src/inventory/postgres/runner.js';
import { PostgresInventory } from '../../../src/inventory/postgres/store.js';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';
import { inventoryContract, runtime, session, type ContractDatabase } from './contract.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.close();
});

let databases = 0;
async function fresh(): Promise<ContractDatabase> {
  const url = await server.createDatabase(`contract_${++databases}`);
  const secretKey = randomBytes(32);
  const raw = async <R>(sql: string): Promise<R[]> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(sql)).rows as R[];
    } finally {
      await client.end();
    }
  };
  return {
    open: async (opts = {}) => PostgresInventory.open({ url, secretKey, metadataKeyPrefixes: ['local_'], ...opts }),
    dump: async () => {
      const tables = ['sessions', 'runtime_inventory', 'pool_members', 'secrets', 'fence', 'schema_migrations'];
      const rows = await Promise.all(tables.map((t) => raw<Record<string, unknown>>(`SELECT * FROM ${t}`)));
      return JSON.stringify(rows, (_k, v: unknown) => (v !== null && typeof v === 'object' && (v as { type?: unknown }).type === 'Buffer' ? Buffer.from((v as { data: number[] }).data).toString('latin1') : v));
    },
    count: async (table) => Number((await raw<{ n: string }>(`SELECT COUNT(*) AS n FROM ${table}`))[0]?.n),
    restart: async (store) => {
      await server.stop();
      await server.start();
      return store;
    },
  };
}

inventoryContract('postgres', fresh);

describe('PostgresInventory', () => {
  const opened: Inventory[] = [];
  afterAll(async () => {
    for (const s of opened) await s.close();
  });

  it('holds a write issued while the server is down until it is back, then commits it', async () => {
    const db = await fresh();
    const store = await db.open();
    opened.push(store);
    await store.insertSession(session());
    await server.stop();
    const pending = store.upsertRuntime(runtime);
    await server.start();
    const row = await pending;
    expect(await store.getRuntime('s-1')).toEqual(row);
  });

  it('fails a write with InventoryUnavailableError once the server stays down past the retry budget, then recovers', async () => {
    const url = await server.createDatabase('budget');
    const store = await PostgresInventory.open({ url, secretKey: randomBytes(32), retryBudgetMs: 500 });
    opened.push(store);
    await server.stop();
    try {
      const err = await store.putSecret('k', 'v').then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(err).toBeInstanceOf(InventoryUnavailableError);
      expect(err?.message).toMatch(/gave up after .* check that Postgres is up/);
      expect(err?.message).not.toContain(server.password);
    } finally {
      await server.start();
    }
    await store.putSecret('k', 'v');
    expect(await store.revealSecret('k')).toBe('v');
  });

  it('writes an egress append once when its transaction runs again after a first attempt committed (a lost acknowledgement)', async () => {
    const db = await fresh();
    const store = await db.open();
    opened.push(store);
    await store.insertSession(session('s-1'));
    const pool = new pg.Pool({ connectionString: server.url(`contract_${databases}`) });
    try {
      const run = new PgRunner(pool, { retryBudgetMs: 1000, secrets: [] });
      const rec = { sessionId: 's-1', host: 'a.test', port: 443, method: 'CONNECT', allowed: true, reason: null, status: null, bytesUp: 1, bytesDown: 2, startedAt: 1, endedAt: 2, broker: null, inputTokens: null, outputTokens: null };
      const attempt = appendRecords([rec, { ...rec, host: 'b.test' }]);
      expect(await run.transaction(attempt)).toBe(2);
      expect(await run.transaction(attempt), 'the retry reports the rows of the first attempt').toBe(2);
      expect((await store.listEgressRecords('s-1')).map((r) => r.host)).toEqual(['a.test', 'b.test']);
      expect(await store.appendEgressRecords([rec]), 'another append is another batch').toBe(1);
      expect(await db.count('egress_records')).toBe(3);
    } finally {
      await pool.end();
    }
  });

  it('refuses a schema newer than it knows', async () => {
    const db = await fresh();
    const store = await db.open();
    opened.push(store);
    const url = server.url(`contract_${databases}`);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query("INSERT INTO schema_migrations VALUES (99, 'future', 'x')");
    await client.end();
    await expect(db.open()).rejects.toThrow(/schema version 99 is newer than this berth \(6\); upgrade berth/);
  });

  it('never shows the connection string or password in an error', async () => {
    const url = server.url('no_such_database');
    const wrongPassword = server.url().replace(server.password, 'wrong-pass-word');
    for (const u of [url, wrongPassword, 'postgresql://berth:s3cret-pw@127.0.0.1:1/db']) {
      const err = await PostgresInventory.open({ url: u, secretKey: randomBytes(32), retryBudgetMs: 300 }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(InventoryOpenError);
      const text = `${(err as Error).message} ${String((err as Error).cause ?? '')}`;
      for (const secret of [server.password, 'wrong-pass-word', 's3cret-pw', u]) expect(text).not.toContain(secret);
    }
  });

  it('opens the configured database from the environment', async () => {
    const url = await server.createDatabase('from_env');
    const env = { BERTH_DATABASE_URL: url, BERTH_SECRET_KEY: randomBytes(32).toString('base64') };
    const store = await openInventory({ dataDir: '/nonexistent', store: { backend: 'postgres', urlEnv: 'BERTH_DATABASE_URL', secretKeyEnv: 'BERTH_SECRET_KEY' }, env });
    opened.push(store);
    expect(store.backend).toBe('postgres');
    await store.putSecret('k', 'v');
    expect(await store.revealSecret('k')).toBe('v');
  });
});
