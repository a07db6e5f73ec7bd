import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLoginFiles } from './login-files.js';

describe('readLoginFiles', () => {
  it('reads the login files that exist under ~ and names the ones it skipped', () => {
    const home = mkdtempSync(join(tmpdir(), 'berth-login-'));
    mkdirSync(join(home, '.claude'));
    writeFileSync(join(home, '.claude', '.credentials.json'), '{"token":"t"}');
    writeFileSync(join(home, 'huge'), Buffer.alloc(600 * 1024));
    const { files, skipped } = readLoginFiles(
      [
        { host: '~/.claude/.credentials.json', state: '.credentials.json' },
        { host: '~/.codex/auth.json', state: 'auth.json' },
        { host: join(home, 'huge'), state: 'huge' },
      ],
      home,
    );
    expect(files).toEqual([{ path: '.credentials.json', data_base64: Buffer.from('{"token":"t"}').toString('base64') }]);
    expect(skipped).toEqual(['~/.codex/auth.json', join(home, 'huge')]);
  });
});
