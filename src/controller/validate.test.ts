import { describe, expect, it } from 'vitest';
import { resolveConfig, resolveProfile } from '../config/index.js';
import { LaunchValidationError } from './service.js';
import { checkSecretEnv, validateRepositoryRef } from './validate.js';

describe('validateRepositoryRef', () => {
  it('copies a valid reference', () => {
    expect(validateRepositoryRef({ path: '/r', branch: 'main' })).toEqual({ path: '/r', branch: 'main' });
    expect(validateRepositoryRef({ url: 'https://x/r.git' })).toEqual({ url: 'https://x/r.git' });
  });

  it.each([
    [undefined, 'repository'],
    [{}, 'repository'],
    [{ url: 'u', path: 'p' }, 'repository'],
    [{ url: ' ' }, 'repository.url'],
    [{ path: '' }, 'repository.path'],
    [{ path: '/r', branch: '' }, 'repository.branch'],
    [{ url: 5 }, 'repository.url'],
  ])('rejects %j at %s', (repo, field) => {
    let caught: unknown;
    try {
      validateRepositoryRef(repo as never);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(LaunchValidationError);
    expect((caught as LaunchValidationError).field).toBe(field);
  });
});

describe('checkSecretEnv', () => {
  const cfg = resolveConfig(
    { executors: { local: { type: 'local', secret_env: ['EXEC_KEY'] } }, profiles: { big: { executor: 'local', secret_env: ['PROFILE_KEY'] } } },
    { source: null, installRoot: '/opt/berth' },
  );
  const set = new Set(['EXEC_KEY', 'PROFILE_KEY', 'HOME', 'PATH']);
  const check = (names: string[], target: string) => checkSecretEnv(names, resolveProfile(cfg, target), (n) => set.has(n));
  const refusal = (names: string[], target: string): LaunchValidationError => {
    try {
      check(names, target);
    } catch (err) {
      if (err instanceof LaunchValidationError) return err;
      throw err;
    }
    throw new Error('accepted');
  };

  it('accepts the names the profile or its executor approves', () => {
    expect(() => check(['PROFILE_KEY', 'EXEC_KEY'], 'big')).not.toThrow();
    expect(() => check(['EXEC_KEY'], 'local')).not.toThrow();
  });

  it("refuses an unapproved name with one message, whether or not serve's environment has it", () => {
    const set = refusal(['HOME'], 'big');
    const unset = refusal(['NOT_SET_ANYWHERE'], 'big');
    expect(set.field).toBe('secretEnv.HOME');
    expect(set.message).toBe("secretEnv.HOME: is not an approved secret for profile 'big' (add it to profiles.big.secret_env or executors.local.secret_env in berth.yaml)");
    expect(unset.message.replace('NOT_SET_ANYWHERE', 'HOME')).toBe(set.message);
    expect(refusal(['PROFILE_KEY'], 'local').message, "a profile's secret is not approved on its executor alone").toBe(
      "secretEnv.PROFILE_KEY: is not an approved secret for executor 'local' (add it to executors.local.secret_env in berth.yaml)",
    );
  });

  it('says an approved name is unset, and refuses a malformed one', () => {
    const approvedUnset = checkSecretEnv.bind(null, ['EXEC_KEY'], resolveProfile(cfg, 'local'), () => false);
    expect(approvedUnset).toThrow('secretEnv.EXEC_KEY: is not set in the controller environment');
    expect(refusal(['A-B'], 'local').message).toBe('secretEnv.A-B: must be a valid environment variable name');
  });
});
