/**
 * Two servers taking over the same stale lock: the one that comes second must not move away the
 * live lock the first one has just written.
 */
import type * as NodeFs from 'node:fs';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

const hooks = vi.hoisted(() => ({ beforeRename: null as null | ((from: string) => void) }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof NodeFs>();
  const renameSync: typeof fs.renameSync = (from, to) => {
    const hook = hooks.beforeRename;
    hooks.beforeRename = null;
    hook?.(String(from));
    fs.renameSync(from, to);
  };
  return { ...fs, default: { ...fs, renameSync }, renameSync };
});

const { LOCK_FILE, ServeLockedError, acquireServeLock } = await import('./data-dir.js');
const { procStartTime } = await import('../shared/proc.js');

describe('serve lock takeover race', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('leaves the live lock of a server that took the stale lock over first', async () => {
    const fs = await vi.importActual<typeof NodeFs>('node:fs');
    dir = mkdtempSync(join(tmpdir(), 'berth-race-'));
    const path = join(dir, LOCK_FILE);
    writeFileSync(path, '2147483646'); // left by a dead server
    const winner = `${process.ppid} ${procStartTime(process.ppid) ?? ''}`.trim();
    // Between our read of the stale lock and our rename, another server does its whole takeover.
    hooks.beforeRename = () => {
      fs.renameSync(path, `${path}.other-stale`);
      fs.rmSync(`${path}.other-stale`);
      fs.writeFileSync(path, winner, { flag: 'wx' });
    };
    expect(() => acquireServeLock(dir)).toThrow(ServeLockedError);
    expect(readFileSync(path, 'utf8')).toBe(winner);
  });
});
