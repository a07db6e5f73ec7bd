import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { bearerToken, tokenMatches } from './token.js';

const req = (authorization?: string): IncomingMessage => ({ headers: authorization === undefined ? {} : { authorization } }) as IncomingMessage;

describe('bearer tokens', () => {
  it('reads the token of a Bearer header (scheme in any case, any spaces between)', () => {
    expect(bearerToken(req('Bearer abc'))).toBe('abc');
    expect(bearerToken(req('bearer abc'))).toBe('abc');
    expect(bearerToken(req('Bearer   abc'))).toBe('abc');
  });

  it('finds none in another scheme, an empty or a malformed header', () => {
    expect(bearerToken(req())).toBeUndefined();
    expect(bearerToken(req('Basic dXNlcjpwYXNz'))).toBeUndefined();
    expect(bearerToken(req('Bearer'))).toBeUndefined();
    expect(bearerToken(req('Bearer a b'))).toBeUndefined();
  });

  it('matches only the exact token, and nothing when either side is missing', () => {
    expect(tokenMatches('s3cret', 's3cret')).toBe(true);
    expect(tokenMatches('s3cret', 'S3cret')).toBe(false);
    expect(tokenMatches('s3cret', 's3cretx')).toBe(false);
    expect(tokenMatches('', 's3cret')).toBe(false);
    expect(tokenMatches(undefined, 's3cret')).toBe(false);
    expect(tokenMatches('s3cret', null)).toBe(false);
  });
});
