import { describe, expect, it } from 'vitest';
import { decodeRepoCredentials, encodeRepoCredentials, redactRepositoryUrl, repoCredentialId, sessionOfRepoCredential, splitRepositoryRef, splitRepositoryUrl } from './repo-credentials.js';
import { LaunchValidationError } from './service.js';

describe('splitRepositoryUrl', () => {
  it.each([
    ['https://user:s3cret@host/x.git', 'https://host/x.git', { username: 'user', password: 's3cret' }],
    ['http://user:s3cret@127.0.0.1:8080/repo.git', 'http://127.0.0.1:8080/repo.git', { username: 'user', password: 's3cret' }],
    ['https://ghp_token123@github.com/o/r.git', 'https://github.com/o/r.git', { username: 'ghp_token123', password: '' }],
    ['https://u:p%40ss%2Fw@host/x.git', 'https://host/x.git', { username: 'u', password: 'p@ss/w' }],
    ['https://u:p@ss@host/x.git?q=1', 'https://host/x.git?q=1', { username: 'u', password: 'p@ss' }],
    ['HTTPS://u:p@host', 'HTTPS://host', { username: 'u', password: 'p' }],
  ])('splits %s into the redacted URL and the credential', (raw, url, credentials) => {
    expect(splitRepositoryUrl(raw)).toEqual({ url, credentials });
  });

  it.each([
    'https://host/x.git',
    'https://host/x@y.git',
    'ssh://git@host/x.git',
    'git@github.com:o/r.git',
    'file:///tmp/repo',
    'git://host/x.git',
  ])('keeps %s as it is (no credential)', (raw) => {
    expect(splitRepositoryUrl(raw)).toEqual({ url: raw });
  });

  it('drops an empty userinfo without reporting a credential', () => {
    expect(splitRepositoryUrl('https://@host/x.git')).toEqual({ url: 'https://host/x.git' });
  });

  it('refuses a password in a non-http(s) URL, naming repository.url', () => {
    const err = (() => {
      try {
        splitRepositoryUrl('ssh://git:hunter22@host/x.git');
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(LaunchValidationError);
    expect((err as LaunchValidationError).field).toBe('repository.url');
    expect((err as Error).message).not.toContain('hunter22');
  });
});

describe('redactRepositoryUrl', () => {
  it.each([
    ['https://user:s3cret@host/x.git', 'https://host/x.git'],
    ['ssh://git:hunter22@host/x.git', 'ssh://host/x.git'],
    ['ssh://git@host/x.git', 'ssh://git@host/x.git'],
    ['/a/local/path', '/a/local/path'],
  ])('shows %s as %s', (raw, shown) => {
    expect(redactRepositoryUrl(raw)).toBe(shown);
  });
});

describe('splitRepositoryRef', () => {
  it('marks a reference whose URL carried a credential', () => {
    expect(splitRepositoryRef({ url: 'https://t0k@host/x.git', branch: 'main' })).toEqual({
      repository: { url: 'https://host/x.git', branch: 'main', credentials: true },
      credentials: { username: 't0k', password: '' },
    });
  });

  it('leaves path references alone', () => {
    const ref: { url?: string; path?: string } = { path: '/src/app' };
    expect(splitRepositoryRef(ref)).toEqual({ repository: { path: '/src/app' } });
  });
});

describe('repository credential secrets', () => {
  it('round-trips the stored form', () => {
    const c = { username: 'u', password: 'p:w@"x' };
    expect(decodeRepoCredentials(encodeRepoCredentials(c))).toEqual(c);
  });

  it('rejects a malformed stored value without echoing it', () => {
    expect(() => decodeRepoCredentials('{"username":"u"}')).toThrow('stored repository credential is malformed');
    expect(() => decodeRepoCredentials('not-json-s3cret')).toThrow(/^stored repository credential is malformed$/);
  });

  it('maps secret ids to their session', () => {
    expect(sessionOfRepoCredential(repoCredentialId('s-abc'))).toBe('s-abc');
    expect(sessionOfRepoCredential('agentctl-auth-s-abc-1')).toBeNull();
  });
});
