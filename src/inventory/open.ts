/**
 * Opening the inventory the config names (`store:` in berth.yaml): the SQLite file in the data dir
 * (the default), or a Postgres database shared by the controller's replicas, whose connection string
 * and secrets' key come from environment variables (never from the config file).
 * @module
 */
import { InventoryOpenError } from './errors.js';
import type { Inventory } from './inventory.js';
import { keyFromBase64 } from './secrets.js';
import { InventoryStore } from './store.js';

/** The `store:` setting as resolved (structurally the config's `StoreConfig`). */
type InventoryBackendSetting = { backend: 'sqlite' } | { backend: 'postgres'; urlEnv: string; secretKeyEnv: string };

interface OpenInventoryOptions {
  /** The data dir (the SQLite database and key file live in `<dataDir>/state/`). */
  dataDir: string;
  store: InventoryBackendSetting;
  /** Where `urlEnv` and `secretKeyEnv` are read (serve's environment). */
  env: Readonly<Record<string, string | undefined>>;
  metadataKeyPrefixes?: readonly string[];
  now?: () => Date;
}

/** Opens the configured backend and applies its migrations. Throws InventoryOpenError naming the setting to fix. */
export async function openInventory(opts: OpenInventoryOptions): Promise<Inventory> {
  const common = { ...(opts.metadataKeyPrefixes ? { metadataKeyPrefixes: opts.metadataKeyPrefixes } : {}), ...(opts.now ? { now: opts.now } : {}) };
  if (opts.store.backend === 'sqlite') return InventoryStore.open({ dataDir: opts.dataDir, ...common });
  const { url, secretKey } = postgresSettings(opts.store, opts.env);
  // loaded only here: `pg` costs ~100 ms of startup that a SQLite controller need not pay
  const { PostgresInventory } = await import('./postgres/store.js');
  return PostgresInventory.open({ url, secretKey, ...common });
}

/**
 * The Postgres connection string and secrets' key from the environment variables `store:` names.
 * Throws InventoryOpenError naming the setting and what to put there.
 */
export function postgresSettings(store: { urlEnv: string; secretKeyEnv: string }, env: Readonly<Record<string, string | undefined>>): { url: string; secretKey: Buffer } {
  const { urlEnv, secretKeyEnv } = store;
  const url = env[urlEnv];
  if (url === undefined || url.trim() === '') {
    throw new InventoryOpenError(
      'postgres',
      `store.url_env: the environment variable ${urlEnv} is not set; set it to the database's connection string (postgres://user:password@host:5432/db) or name another variable in store.url_env`,
    );
  }
  const keyText = env[secretKeyEnv];
  if (keyText === undefined || keyText.trim() === '') {
    throw new InventoryOpenError(
      'postgres',
      `store.secret_key_env: the environment variable ${secretKeyEnv} is not set; set it to base64 of 32 random bytes (openssl rand -base64 32), the same on every controller replica`,
    );
  }
  const secretKey = keyFromBase64(keyText);
  if (secretKey === null) {
    throw new InventoryOpenError(
      'postgres',
      `store.secret_key_env: the environment variable ${secretKeyEnv} must hold base64 of exactly 32 bytes (openssl rand -base64 32), the same on every controller replica`,
    );
  }
  return { url, secretKey };
}
