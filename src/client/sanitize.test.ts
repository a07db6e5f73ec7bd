import { describe, expect, it } from 'vitest';
import { MAX_SANITIZED_LENGTH, sanitize } from './sanitize.js';

const TOKEN = 'a3f9'.repeat(16);

describe('sanitize', () => {
  it.each([
    ['a known secret', `bad token ${TOKEN}`, TOKEN],
    ['a bearer header', 'got Authorization: Bearer abc.def-ghi', 'abc.def-ghi'],
    ['a bare bearer value', 'sent Bearer shorttoken123', 'shorttoken123'],
    ['a JSON nonce field', '{"nonce":"n-0123"}', 'n-0123'],
    ['a token= pair', 'token=xyz987 rejected', 'xyz987'],
    ['an opaque 32+ character run', `id ${'Zx9'.repeat(12)}`, 'Zx9'.repeat(12)],
  ])('removes %s', (_name, input, secret) => {
    expect(sanitize(input, [secret.length < 32 ? secret : undefined])).not.toContain(secret);
  });

  it('keeps ordinary text and paths', () => {
    expect(sanitize('not_found: process p-1 in /workspace/src/a.ts')).toBe('not_found: process p-1 in /workspace/src/a.ts');
  });

  it('caps the length', () => {
    expect(sanitize('x '.repeat(5000)).length).toBe(MAX_SANITIZED_LENGTH + 1);
  });
});
