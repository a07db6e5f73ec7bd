import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLayoutError, ensureStateDir } from './layout.js';

const dirs: string[] = [];
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'berth-layout-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('ensureStateDir', () => {
  it('creates <data>/state with mode 0700', () => {
    const d = dataDir();
    const state = ensureStateDir(d);
    expect(state).toBe(join(d, 'state'));
    expect(statSync(state).mode & 0o777).toBe(0o700);
  });

  it('moves the secrets of a flat-layout data dir into state/ and leaves workspaces/ where it is', () => {
    const d = dataDir();
    for (const f of ['berth.db', 'berth.db-wal', 'secret.key', 'api-token']) writeFileSync(join(d, f), f);
    mkdirSync(join(d, 'workspaces', 's-1'), { recursive: true });
    ensureStateDir(d);
    for (const f of ['berth.db', 'berth.db-wal', 'secret.key', 'api-token']) {
      expect(existsSync(join(d, f)), `${f} left at the top level`).toBe(false);
      expect(readFileSync(join(d, 'state', f), 'utf8')).toBe(f);
    }
    expect(existsSync(join(d, 'workspaces', 's-1'))).toBe(true);
  });

  it('finishes a migration cut short (the database not moved yet)', () => {
    const d = dataDir();
    mkdirSync(join(d, 'state'));
    writeFileSync(join(d, 'state', 'secret.key'), 'key');
    writeFileSync(join(d, 'berth.db'), 'db');
    ensureStateDir(d);
    expect(readFileSync(join(d, 'state', 'berth.db'), 'utf8')).toBe('db');
    expect(readFileSync(join(d, 'state', 'secret.key'), 'utf8')).toBe('key');
  });

  it('refuses a data dir holding a database in both layouts, touching neither', () => {
    const d = dataDir();
    mkdirSync(join(d, 'state'));
    writeFileSync(join(d, 'state', 'berth.db'), 'new');
    writeFileSync(join(d, 'berth.db'), 'old');
    expect(() => ensureStateDir(d)).toThrow(DataDirLayoutError);
    expect(readFileSync(join(d, 'berth.db'), 'utf8')).toBe('old');
    expect(readFileSync(join(d, 'state', 'berth.db'), 'utf8')).toBe('new');
  });
});
