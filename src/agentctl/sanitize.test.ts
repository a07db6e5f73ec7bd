import { describe, expect, it } from 'vitest';
import { sanitize } from './sanitize.js';

describe('sanitize', () => {
  it('redacts bearer tokens, long opaque tokens and home directories', () => {
    const token = 'a1'.repeat(32);
    expect(sanitize(`Authorization: Bearer ${token}`)).not.toContain(token);
    expect(sanitize(`token ${token} leaked`)).toBe('token [redacted] leaked');
    expect(sanitize('ghp_abcdefghijklmnop')).toBe('[redacted]');
    expect(sanitize('/home/alice/.ssh/id_rsa')).toBe('/home/~/.ssh/id_rsa');
  });

  it('keeps git object ids and paths readable', () => {
    const sha = 'f'.repeat(40);
    expect(sanitize(`fatal: bad object ${sha} in /workspace/src/a-b_c.ts`)).toBe(`fatal: bad object ${sha} in /workspace/src/a-b_c.ts`);
  });

  it('caps the length', () => {
    expect(sanitize('x '.repeat(5000)).length).toBeLessThanOrEqual(4097);
  });
});
