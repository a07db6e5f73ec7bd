import { describe, expect, it } from 'vitest';
import { sanitize, MAX_SANITIZED_LENGTH } from './sanitize.js';

describe('sanitize', () => {
  it.each([
    ['bearer tokens', 'GET failed: Authorization: Bearer abcdef0123456789', 'abcdef0123456789'],
    ['opaque hex nonces', 'nonce 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 rejected', '9f86d081884c7d659a2feaa0c55ad015'],
    ['key=value secrets', 'config token=s3cr3t-value failed', 's3cr3t-value'],
    ['URL credentials', 'clone https://user:pa55@example.com/repo.git failed', 'pa55'],
    ['URL credentials with an unencoded @', "clone 'https://user:pa@55x@example.com/repo.git' failed", '55x'],
    ['a token as the URL user name', 'clone https://tok3n-value@example.com/repo.git failed', 'tok3n-value'],
    ['URL query strings', 'fetch https://example.com/x?access_token=zzz failed', 'zzz'],
    ['GitHub tokens', 'push with ghp_ABCDEFGHIJKLMNOP failed', 'ghp_ABCDEFGHIJKLMNOP'],
  ])('redacts %s', (_name, input, secret) => {
    const out = sanitize(input, { home: '/home/nobody' });
    expect(out).not.toContain(secret);
    expect(out).toContain('***');
  });

  it('replaces the home directory and keeps other paths', () => {
    expect(sanitize('cannot read /home/alice/.berth/workspaces/s1/repo', { home: '/home/alice' })).toBe(
      'cannot read ~/.berth/workspaces/s1/repo',
    );
  });

  it('caps the length', () => {
    expect(sanitize('x '.repeat(10_000), { home: '/nonexistent-home' }).length).toBeLessThanOrEqual(MAX_SANITIZED_LENGTH);
  });
});
