/**
 * `store:` in berth.yaml: where the inventory lives. SQLite in the data dir (the default, one
 * controller), or Postgres for a team deployment whose controller replicas share one database. The
 * connection string and the secrets' key are never in the file: it names the environment variables
 * that hold them.
 * @module
 */
import { z } from 'zod';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { ENV_NAME } from '../shared/env-name.js';

const envName = z.string({ error: 'must be an environment variable name' }).regex(ENV_NAME, { error: 'must be an environment variable name' });

/** The raw `store:` block. */
export const StoreSchema = z.strictObject({
  backend: z.enum(['sqlite', 'postgres'], { error: 'must be "sqlite" or "postgres"' }).optional(),
  /** The variable holding the Postgres connection string. @default BERTH_DATABASE_URL */
  url_env: envName.optional(),
  /** The variable holding the secrets' key (base64 of 32 bytes), the same on every replica. @default BERTH_SECRET_KEY */
  secret_key_env: envName.optional(),
});

/** The resolved `store:` setting. */
export type StoreConfig = { backend: 'sqlite' } | { backend: 'postgres'; urlEnv: string; secretKeyEnv: string };

const DEFAULT_URL_ENV = 'BERTH_DATABASE_URL';
const DEFAULT_SECRET_KEY_ENV = 'BERTH_SECRET_KEY';

export function resolveStore(raw: z.infer<typeof StoreSchema> | undefined, source: string | null): StoreConfig {
  const backend = raw?.backend ?? 'sqlite';
  if (backend === 'sqlite') {
    // a Postgres setting under the SQLite backend is a mistake to point out, not to ignore
    for (const key of ['url_env', 'secret_key_env'] as const) {
      if (raw?.[key] !== undefined) throw new ConfigFieldError(`store.${key}`, 'is only used with store.backend: postgres', source);
    }
    return { backend: 'sqlite' };
  }
  return { backend: 'postgres', urlEnv: raw?.url_env ?? DEFAULT_URL_ENV, secretKeyEnv: raw?.secret_key_env ?? DEFAULT_SECRET_KEY_ENV };
}
