import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { Auth } from './auth.js';
import { HttpError } from './errors.js';

const req = (headers: Record<string, string>): IncomingMessage => ({ headers }) as unknown as IncomingMessage;

function code(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof HttpError ? err.code : 'other';
  }
}

describe('Auth', () => {
  it('trades the nonce for a 256-bit hex token exactly once', () => {
    const auth = new Auth('nonce-1');
    expect(code(() => auth.handshake('wrong'))).toBe('forbidden');
    const token = auth.handshake('nonce-1');
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(code(() => auth.handshake('nonce-1'))).toBe('forbidden');
  });

  it('refuses every handshake without a configured nonce', () => {
    expect(code(() => new Auth(null).handshake(''))).toBe('forbidden');
  });

  it('checks the bearer token, then the instance id', () => {
    const auth = new Auth('n');
    expect(code(() => auth.verifyBearer(req({ authorization: 'Bearer x' }))), 'no token issued yet').toBe('unauthorized');
    const token = auth.handshake('n');
    expect(code(() => auth.verifyBearer(req({})))).toBe('unauthorized');
    expect(code(() => auth.verifyBearer(req({ authorization: `bearer ${token}` }))), 'the scheme is case-insensitive').toBeUndefined();
    expect(code(() => auth.verifyBearer(req({ authorization: `Bearer ${token.toUpperCase()}` })))).toBe('unauthorized');
    expect(code(() => auth.verifyBearer(req({ authorization: `Bearer ${token}x` })))).toBe('unauthorized');
    expect(code(() => auth.verifyBearer(req({ authorization: `Bearer ${token}` })))).toBeUndefined();
    expect(code(() => auth.verifyInstance(req({ authorization: `Bearer ${token}`, 'x-instance-id': 'a' }), 'b'))).toBe('forbidden');
    expect(code(() => auth.verifyInstance(req({ authorization: `Bearer ${token}` }), 'b'))).toBe('forbidden');
    expect(code(() => auth.verifyInstance(req({ authorization: `Bearer ${token}`, 'x-instance-id': 'b' }), 'b'))).toBeUndefined();
  });
});
