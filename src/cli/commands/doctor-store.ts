/**
 * `berth doctor`'s look at the inventory the config names (`store:`): the SQLite file in the data
 * dir, or the Postgres database shared by a team's controllers, reached from this machine with the
 * configured credentials and read without writing. It also tells whose installation id marks this
 * deployment's Kubernetes objects (the database's, with Postgres; the data dir's, with SQLite).
 * @module
 */
import type { ResolvedConfig } from '../../config/index.js';
import { postgresSettings } from '../../inventory/index.js';
import type { Check } from '../types.js';

export interface StoreCheck {
  check: Check | null;
  /** The installation id the store holds; undefined: ask the data dir (SQLite), null: none yet. */
  installationId?: string | null;
}

export async function checkStore(config: ResolvedConfig | null, env: NodeJS.ProcessEnv): Promise<StoreCheck> {
  if (config === null || config.store.backend === 'sqlite') return { check: null };
  const name = 'store';
  let url: string;
  try {
    url = postgresSettings(config.store, env).url;
  } catch (err) {
    return { check: { name, ok: false, detail: (err as Error).message.replace(/^inventory: cannot open postgres: /, 'postgres: '), fix: 'set the variable in the environment berth serve (and this doctor) runs with' }, installationId: null };
  }
  // loaded only here: `pg` is no cost to a doctor of a SQLite controller
  const { probePostgres } = await import('../../inventory/postgres/probe.js');
  const probe = await probePostgres(url);
  if (!probe.ok) {
    return {
      check: { name, ok: false, detail: `postgres ${probe.where}: ${probe.error}`, fix: `check that Postgres is up and reachable from here and that the credentials in $${config.store.urlEnv} are right` },
      installationId: null,
    };
  }
  const { where, schemaVersion, latestVersion, sessions, installationId } = probe;
  if (schemaVersion > latestVersion) {
    return { check: { name, ok: false, detail: `postgres ${where}: schema v${schemaVersion} was written by a newer berth (this one writes v${latestVersion})`, fix: 'upgrade this berth to the version the controllers run' }, installationId };
  }
  if (schemaVersion === 0) {
    return { check: { name, ok: true, warn: true, detail: `postgres ${where}: reachable, no schema yet`, fix: 'berth serve creates it at its first start' }, installationId };
  }
  const pending = schemaVersion < latestVersion ? `; v${latestVersion} is applied at the next berth serve start` : '';
  return { check: { name, ok: true, detail: `postgres ${where}: schema v${schemaVersion}${pending}, ${sessions} session(s)` }, installationId };
}
