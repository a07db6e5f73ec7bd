import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LaunchError } from '../launch-kit/index.js';
import { credentialEnv, validateRepository } from './workspace.js';

describe('validateRepository', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-ws-'));
    mkdirSync(join(dir, 'repo'));
    execFileSync('git', ['init', '-q'], { cwd: join(dir, 'repo') });
    mkdirSync(join(dir, 'plain'));
    writeFileSync(join(dir, 'file'), 'x');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('accepts a local git repository and a clone URL', () => {
    expect(validateRepository({ path: join(dir, 'repo') })).toEqual({ source: join(dir, 'repo'), field: 'repository.path' });
    expect(validateRepository({ url: 'https://example.com/r.git' })).toEqual({ source: 'https://example.com/r.git', field: 'repository.url' });
  });

  it.each([
    [{ path: '/nonexistent/berth-repo' }, 'RepositoryNotFound', 'repository.path: /nonexistent/berth-repo does not exist'],
    [{ path: 'FILE' }, 'RepositoryNotFound', 'is not a directory'],
    [{ path: 'PLAIN' }, 'NotAGitRepository', 'is not a git repository'],
    [{ url: 'file:///nonexistent/berth.git' }, 'RepositoryNotFound', 'repository.url: file:///nonexistent/berth.git does not exist'],
    [{ url: ' ' }, 'InvalidRepository', 'repository.url: must not be empty'],
    [{}, 'InvalidRepository', 'repository: set url or path'],
    [{ url: 'u', path: 'p' }, 'InvalidRepository', 'cannot set both'],
  ])('rejects %j with %s', (repo, reason, message) => {
    const fixed = { ...repo } as { url?: string; path?: string };
    if (fixed.path === 'FILE') fixed.path = join(dir, 'file');
    if (fixed.path === 'PLAIN') fixed.path = join(dir, 'plain');
    let caught: unknown;
    try {
      validateRepository(fixed);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(LaunchError);
    expect((caught as LaunchError).stage).toBe('workspace');
    expect((caught as LaunchError).reason).toBe(reason);
    expect((caught as LaunchError).message).toContain(message);
  });
});

describe('credentialEnv', () => {
  it('resets the user helpers and scopes a helper reading env vars to the URL origin', () => {
    const env = credentialEnv('https://git.example.com:8443/org/app.git?x=1', { username: 'u', password: 'p4ss-w0rd' });
    expect(env).toMatchObject({
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'credential.helper',
      GIT_CONFIG_VALUE_0: '',
      GIT_CONFIG_KEY_1: 'credential.https://git.example.com:8443.helper',
      BERTH_GIT_USERNAME: 'u',
      BERTH_GIT_PASSWORD: 'p4ss-w0rd',
    });
    // the helper is config (not argv) and names the variables, never the values
    expect(env.GIT_CONFIG_VALUE_1).toMatch(/^!f\(\) \{ test "\$1" = get \|\| exit 0; printf .*"\$BERTH_GIT_USERNAME" "\$BERTH_GIT_PASSWORD"; \}; f$/);
    expect(env.GIT_CONFIG_VALUE_1).not.toContain('p4ss-w0rd');
  });
});
