import { describe, expect, it } from 'vitest';
import { resolveConfig } from './config.js';

const resolveRaw = (raw: unknown) => resolveConfig(raw, { source: '/etc/berth.yaml', installRoot: '/opt/berth' });

describe('store:', () => {
  it('is SQLite unless configured', () => {
    expect(resolveRaw({}).store).toEqual({ backend: 'sqlite' });
    expect(resolveRaw({ store: { backend: 'sqlite' } }).store).toEqual({ backend: 'sqlite' });
  });

  it('names the environment variables of a Postgres store, with defaults', () => {
    expect(resolveRaw({ store: { backend: 'postgres' } }).store).toEqual({ backend: 'postgres', urlEnv: 'BERTH_DATABASE_URL', secretKeyEnv: 'BERTH_SECRET_KEY' });
    expect(resolveRaw({ store: { backend: 'postgres', url_env: 'DB_URL', secret_key_env: 'DB_KEY' } }).store).toEqual({
      backend: 'postgres',
      urlEnv: 'DB_URL',
      secretKeyEnv: 'DB_KEY',
    });
  });

  it('names the field of a wrong setting', () => {
    expect(() => resolveRaw({ store: { backend: 'mysql' } })).toThrow('store.backend: must be "sqlite" or "postgres" (in /etc/berth.yaml)');
    expect(() => resolveRaw({ store: { backend: 'postgres', url_env: 'postgres://u:p@h/db' } })).toThrow('store.url_env: must be an environment variable name');
    expect(() => resolveRaw({ store: { backend: 'postgres', url: 'x' } })).toThrow(/^store\.url: is not a known setting/);
    expect(() => resolveRaw({ store: { url_env: 'DB_URL' } })).toThrow('store.url_env: is only used with store.backend: postgres');
    expect(() => resolveRaw({ store: 'postgres' })).toThrow(/^store: /);
  });
});
