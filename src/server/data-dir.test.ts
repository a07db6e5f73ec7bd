import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { procStartTime } from '../shared/proc.js';
import { LOCK_FILE, ServeLockedError, acquireServeLock, discoverServer, resolveDataDir, writeApiToken, writeServeInfo } from './data-dir.js';

describe('resolveDataDir', () => {
  it.each([
    ['the flag first', '/flag', { BERTH_DATA_DIR: '/env', HOME: '/home/u' }, '/flag'],
    ['then $BERTH_DATA_DIR', undefined, { BERTH_DATA_DIR: '/env', HOME: '/home/u' }, '/env'],
    ['an empty $BERTH_DATA_DIR is unset', undefined, { BERTH_DATA_DIR: '', HOME: '/home/u' }, '/home/u/.local/share/berth'],
    ['then ~/.local/share/berth', undefined, { HOME: '/home/u' }, '/home/u/.local/share/berth'],
    ['a relative flag made absolute', 'rel', {}, resolve('rel')],
  ])('takes %s', (_name, flag, env, expected) => {
    expect(resolveDataDir(flag, env)).toBe(expected);
  });
});

describe('serve files', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses the lock while its holder lives and frees it on release', () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-dd-'));
    const release = acquireServeLock(dir);
    expect(() => acquireServeLock(dir)).toThrow(ServeLockedError);
    release();
    acquireServeLock(dir)();
  });

  it('takes over a lock whose pid is dead', () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-dd-'));
    writeFileSync(join(dir, LOCK_FILE), '2147483646');
    const release = acquireServeLock(dir);
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8').split(' ')[0]).toBe(String(process.pid));
    release();
  });

  // Start times come from /proc: without it (macOS …) a lock records the pid alone, and this case is skipped, visibly.
  it.skipIf(procStartTime(process.ppid) === null)('treats a live pid with another start time as reused (stale), and a matching one as held (needs /proc)', () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-dd-'));
    const other = process.ppid;
    const start = procStartTime(other);
    if (start === null) throw new Error(`no start time for pid ${other}`);
    writeFileSync(join(dir, LOCK_FILE), `${other} ${start}`);
    expect(() => acquireServeLock(dir)).toThrow(ServeLockedError);
    writeFileSync(join(dir, LOCK_FILE), String(other)); // a lock without a start time: the pid decides
    expect(() => acquireServeLock(dir)).toThrow(ServeLockedError);
    writeFileSync(join(dir, LOCK_FILE), `${other} ${Number(start) + 1}`); // the pid was reused
    const release = acquireServeLock(dir);
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(`${process.pid} ${procStartTime(process.pid)}`);
    release();
  });

  it('writes a 256-bit token readable only by the owner, new each time', () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-dd-'));
    const a = writeApiToken(dir);
    const b = writeApiToken(dir);
    expect(a).not.toBe(b);
    expect(Buffer.from(b, 'base64url')).toHaveLength(32);
    expect(statSync(join(dir, 'state', 'api-token')).mode & 0o777).toBe(0o600);
  });

  it('writes a given token (--token-file) as it is, mode 0600, for local tooling', () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-dd-'));
    const given = 'a-token-from-a-mounted-secret-0123456789';
    expect(writeApiToken(dir, given)).toBe(given);
    expect(readFileSync(join(dir, 'state', 'api-token'), 'utf8')).toBe(`${given}\n`);
    expect(statSync(join(dir, 'state', 'api-token')).mode & 0o777).toBe(0o600);
  });

  it('discovers a server only while the recorded pid lives', () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-dd-'));
    const token = writeApiToken(dir);
    writeServeInfo(dir, { pid: process.pid, port: 4321, startedAt: 'now' });
    expect(discoverServer(dir)).toMatchObject({ baseUrl: 'http://127.0.0.1:4321', token });
    writeServeInfo(dir, { pid: 2147483646, port: 4321, startedAt: 'now' });
    expect(discoverServer(dir)).toBeNull();
  });
});
