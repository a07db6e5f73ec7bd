import { describe, expect, it } from 'vitest';
import { resolveConfig } from './config.js';

const resolveRaw = (raw: unknown) => resolveConfig(raw, { source: '/etc/berth.yaml', installRoot: '/opt/berth' });
const TEMPLATE = 'spec:\n  containers: [{ name: agent, image: x }]\n';
const withPool = (pool: unknown, executor: unknown = { type: 'kubernetes', namespace: 'ns' }) =>
  resolveRaw({ executors: { cluster: executor }, profiles: { k8s: { executor: 'cluster', kubernetes: { pod_template: TEMPLATE }, pool } } });

describe('pool: on a kubernetes profile', () => {
  it('resolves size and max_age (24h by default)', () => {
    expect(withPool({ size: 3 }).profiles.k8s?.pool).toEqual({ size: 3, maxAgeMs: 86_400_000, repository: null });
    expect(withPool({ size: 0, max_age: '2h' }).profiles.k8s?.pool).toEqual({ size: 0, maxAgeMs: 7_200_000, repository: null });
    expect(withPool(undefined).profiles.k8s?.pool, 'no pool unless configured').toBeUndefined();
  });

  it('resolves a repository pool: URL, branch, refresh (10m by default)', () => {
    expect(withPool({ size: 2, repository: 'https://git.example/app.git' }).profiles.k8s?.pool?.repository).toEqual({ url: 'https://git.example/app.git', branch: null, refreshMs: 600_000 });
    expect(withPool({ size: 2, repository: 'git@git.example:app.git', branch: 'main', refresh: '2m' }).profiles.k8s?.pool?.repository).toEqual({ url: 'git@git.example:app.git', branch: 'main', refreshMs: 120_000 });
    expect(() => withPool({ size: 2, repository: 'https://user:tok@git.example/app.git' })).toThrow(/profiles\.k8s\.pool\.repository: must not carry credentials/);
    expect(() => withPool({ size: 2, repository: 'ftp://git.example/app.git' })).toThrow(/profiles\.k8s\.pool\.repository: must be an https, http, git, ssh or file URL/);
    expect(() => withPool({ size: 2, repository: '' })).toThrow(/profiles\.k8s\.pool\.repository: must be a clone URL/);
    expect(() => withPool({ size: 2, repository: 'https://git.example/a.git', branch: '-x' })).toThrow(/profiles\.k8s\.pool\.branch: must be a branch name/);
    expect(() => withPool({ size: 2, repository: 'https://git.example/a.git', refresh: '5s' })).toThrow(/profiles\.k8s\.pool\.refresh: must be between 1m and 24h/);
    expect(() => withPool({ size: 2, branch: 'main' })).toThrow(/profiles\.k8s\.pool\.branch: is only allowed with pool\.repository/);
  });

  it('names the field of a bad size or max_age, and refuses a pool on a local profile', () => {
    expect(() => withPool({ size: -1 })).toThrow(/profiles\.k8s\.pool\.size: must be a whole number from 0 to 50/);
    expect(() => withPool({ size: 2.5 })).toThrow(/profiles\.k8s\.pool\.size: must be a whole number from 0 to 50/);
    expect(() => withPool({ size: 51 })).toThrow(/profiles\.k8s\.pool\.size: must be a whole number from 0 to 50/);
    expect(() => withPool({ size: '2' })).toThrow(/profiles\.k8s\.pool\.size/);
    expect(() => withPool({ size: 2, max_age: 'soon' })).toThrow(/profiles\.k8s\.pool\.max_age: must be a duration such as 1h or 30m/);
    expect(() => withPool({ size: 2, max_age: '30s' })).toThrow(/profiles\.k8s\.pool\.max_age: must be between 1m and 30d/);
    expect(() => withPool({ size: 2, warm: true })).toThrow(/profiles\.k8s\.pool/);
    expect(() => resolveRaw({ profiles: { p: { executor: 'local', pool: { size: 1 } } } })).toThrow(/profiles\.p\.pool: is only allowed on a profile of a kubernetes executor \('local' is local\)/);
  });
});
