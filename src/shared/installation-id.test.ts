import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureInstallationId, InstallationIdError, readInstallationId } from './installation-id.js';

const dirs: string[] = [];
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'berth-install-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('installation id', () => {
  it('is created once per data dir (state/installation-id, 0600) and read back the same', () => {
    const d = dataDir();
    expect(readInstallationId(d)).toBeNull();
    const id = ensureInstallationId(d);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(ensureInstallationId(d)).toBe(id);
    expect(readInstallationId(d)).toBe(id);
    expect(readFileSync(join(d, 'state', 'installation-id'), 'utf8')).toBe(`${id}\n`);
    expect(statSync(join(d, 'state', 'installation-id')).mode & 0o777).toBe(0o600);
    expect(ensureInstallationId(dataDir())).not.toBe(id);
  });

  it('refuses a file that does not hold one, naming it', () => {
    const d = dataDir();
    mkdirSync(join(d, 'state'), { recursive: true });
    writeFileSync(join(d, 'state', 'installation-id'), 'not an id\n');
    expect(() => ensureInstallationId(d)).toThrow(InstallationIdError);
    expect(() => readInstallationId(d)).toThrow(/state\/installation-id does not hold an installation id/);
  });
});
