/**
 * A read-only look at a Postgres inventory for `berth doctor`: can this machine reach it with the
 * configured credentials, which schema version it holds (none yet: `berth serve` creates it), how
 * many sessions, and the installation id that marks this deployment's Kubernetes objects. It never
 * writes (no migration, no installation id): a diagnosis must not change what it diagnoses.
 * @module
 */
import pg from 'pg';
import { PG_SCHEMA_VERSION } from './migrations.js';
import { describeUrl, redact, urlSecrets } from './runner.js';

type PostgresProbe =
  | {
      ok: true;
      /** The database without credentials (`postgres://host:5432/db`). */
      where: string;
      /** 0: no schema yet. */
      schemaVersion: number;
      /** The version this berth writes. */
      latestVersion: number;
      sessions: number;
      installationId: string | null;
    }
  | { ok: false; where: string; error: string };

/** Connects once (no retries: doctor reports, it does not wait), bounded by `timeoutMs` per step. */
export async function probePostgres(url: string, timeoutMs = 5000): Promise<PostgresProbe> {
  const where = describeUrl(url);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => undefined); // a dropped connection fails the query in flight; nothing more to do
  try {
    await client.connect();
    const one = async <R>(sql: string): Promise<R | undefined> => (await client.query<R & pg.QueryResultRow>(sql)).rows[0];
    const tables = await one<{ migrations: boolean; settings: boolean; sessions: boolean }>(
      "SELECT to_regclass('schema_migrations') IS NOT NULL AS migrations, to_regclass('settings') IS NOT NULL AS settings, to_regclass('sessions') IS NOT NULL AS sessions",
    );
    const version = tables?.migrations ? ((await one<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations'))?.v ?? 0) : 0;
    const sessions = tables?.sessions ? Number((await one<{ n: string }>('SELECT COUNT(*) AS n FROM sessions'))?.n ?? 0) : 0;
    const id = tables?.settings ? ((await one<{ value: string }>("SELECT value FROM settings WHERE key = 'installation_id'"))?.value ?? null) : null;
    return { ok: true, where, schemaVersion: version, latestVersion: PG_SCHEMA_VERSION, sessions, installationId: id };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return { ok: false, where, error: redact(`${typeof code === 'string' ? `${code}: ` : ''}${(err as Error).message}`, urlSecrets(url)) };
  } finally {
    await client.end().catch(() => undefined);
  }
}
