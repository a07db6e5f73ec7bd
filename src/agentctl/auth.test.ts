import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Auth } from './auth.js';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { HttpError } from '../shared/http/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function nonceDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'berth-nonce-'));
  dirs.push(d);
  return d;
}

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

  it('reads the nonce file and removes it before anything can read it again', () => {
    const file = join(nonceDir(), 'nonce');
    writeFileSync(file, 'a'.repeat(64) + '\n', { mode: 0o600 });
    const auth = new Auth(null, file);
    expect(existsSync(file), 'the file is gone once agentctl has the nonce').toBe(false);
    expect(auth.handshake('a'.repeat(64))).toMatch(/^[0-9a-f]{64}$/);
  });

  it('takes a fresh nonce written after start (a restarted agentctl), and only until a handshake succeeds', () => {
    const file = join(nonceDir(), 'nonce');
    const auth = new Auth(null, file);
    expect(code(() => auth.handshake('b'.repeat(64))), 'no nonce yet').toBe('forbidden');
    writeFileSync(file, 'b'.repeat(64), { mode: 0o600 });
    auth.handshake('b'.repeat(64));
    writeFileSync(file, 'c'.repeat(64), { mode: 0o600 });
    expect(code(() => auth.handshake('c'.repeat(64))), 'one handshake per process').toBe('forbidden');
  });

  it('refuses a nonce file that is a symlink, or too short, without showing its content', () => {
    const d = nonceDir();
    writeFileSync(join(d, 'target'), 'd'.repeat(64));
    symlinkSync(join(d, 'target'), join(d, 'link'));
    expect(() => new Auth(null, join(d, 'link'))).toThrow(ConfigFieldError);
    writeFileSync(join(d, 'short'), 'secret-x');
    let message = '';
    try {
      new Auth(null, join(d, 'short'));
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/at least 16 characters/);
    expect(message).not.toContain('secret-x');
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
