import { describe, expect, it } from 'vitest';
import { LaunchValidationError } from './service.js';
import { validateRepositoryRef } from './validate.js';

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
