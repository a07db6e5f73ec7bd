/**
 * `berth doctor` with `store: {backend: postgres}` against a real Postgres server: the variables
 * the config names (missing, or a bad key: the setting is named), a reachable database with no
 * schema yet (a warning: serve creates it), one that serve migrated (its version and sessions), and
 * one that is down (a failure that says what to check). The password never shows, and doctor writes
 * nothing to the database.
 */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresInventory } from '../../../src/inventory/postgres/store.js';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';
import { ensureBuilt, runCli, tempDir, type CliResult } from './helpers.js';

let server: TestPostgres;
let dataDir: string;
const key = randomBytes(32).toString('base64');

beforeAll(async () => {
  ensureBuilt();
  server = await startPostgres();
  dataDir = tempDir('berth-doctor-store-');
  writeFileSync(join(dataDir, 'berth.yaml'), 'store:\n  backend: postgres\n  url_env: TEAM_DB_URL\n');
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** doctor's `store` line (with its fix line, if any). */
function storeLine(r: CliResult): string {
  const lines = r.stdout.split('\n');
  const i = lines.findIndex((l) => /^(ok|warn|fail)\s+store\s/.test(l));
  if (i < 0) throw new Error(`no store line in:\n${r.stdout}\n${r.stderr}`);
  return [lines[i], lines[i + 1]?.includes('fix:') ? lines[i + 1] : ''].join('\n').trim();
}

const doctor = (env: Record<string, string>): Promise<CliResult> => runCli(['doctor'], { dataDir, env: { BERTH_DATABASE_URL: '', BERTH_SECRET_KEY: '', ...env } });

describe('berth doctor: the Postgres store', () => {
  it('names the variable that is missing, and the key that is not 32 bytes', async () => {
    const unset = await doctor({});
    expect(unset.code).toBe(1);
    expect(storeLine(unset)).toMatch(/^fail\s+store\s+postgres: store\.url_env: the environment variable TEAM_DB_URL is not set/);
    const badKey = await doctor({ TEAM_DB_URL: server.url('postgres'), BERTH_SECRET_KEY: 'c2hvcnQ=' });
    expect(storeLine(badKey)).toMatch(/^fail\s+store\s+postgres: store\.secret_key_env: .*BERTH_SECRET_KEY must hold base64 of exactly 32 bytes/);
  });

  it('warns about a database with no schema yet, then reports the schema serve wrote, without writing itself', async () => {
    const url = await server.createDatabase('doctor_fresh');
    const fresh = await doctor({ TEAM_DB_URL: url, BERTH_SECRET_KEY: key });
    expect(storeLine(fresh)).toMatch(/^warn\s+store\s+postgres postgresql?:\/\/127\.0\.0\.1:\d+\/doctor_fresh: reachable, no schema yet\n.*fix: berth serve creates it/);
    expect(fresh.stdout).not.toContain(server.password);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const tables = await client.query<{ n: string }>("SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = 'public'").finally(() => client.end());
    expect(Number(tables.rows[0]?.n), 'doctor created no table').toBe(0);
    const inventory = await PostgresInventory.open({ url, secretKey: randomBytes(32) });
    const version = await inventory.schemaVersion();
    await inventory.installationId();
    await inventory.close();
    const migrated = await doctor({ TEAM_DB_URL: url, BERTH_SECRET_KEY: key });
    expect(storeLine(migrated)).toMatch(new RegExp(`^ok\\s+store\\s+postgres postgresql?://127\\.0\\.0\\.1:\\d+/doctor_fresh: schema v${version}, 0 session\\(s\\)$`));
  });

  it('fails on a database that is down, says what to check, and never shows the password', async () => {
    const url = await server.createDatabase('doctor_down');
    await server.stop();
    try {
      const down = await doctor({ TEAM_DB_URL: url, BERTH_SECRET_KEY: key });
      expect(down.code).toBe(1);
      expect(storeLine(down)).toMatch(/^fail\s+store\s+postgres postgresql?:\/\/127\.0\.0\.1:\d+\/doctor_down: .*ECONNREFUSED[^\n]*\n\s+fix: check that Postgres is up and reachable from here and that the credentials in \$TEAM_DB_URL are right/);
      expect(down.stdout + down.stderr).not.toContain(server.password);
    } finally {
      await server.start();
    }
  });
});
