/**
 * bin/berth.js, as a user runs it: its front door answers help and version itself, and must say
 * exactly what the full CLI (dist/berth.js) says; everything else reaches the full CLI.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt, ROOT } from './helpers.js';

const BIN = join(ROOT, 'bin', 'berth.js');

function run(entry: string, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [entry, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, BERTH_DATA_DIR: join(ROOT, 'no-such-data-dir') } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('bin/berth.js', () => {
  beforeAll(() => ensureBuilt());

  it.each([[[]], [['--help']], [['help', 'launch']], [['ls', '--help']], [['--version']], [['version']], [['version', '-o', 'json']]])('%j prints what the full CLI prints', (args) => {
    const full = run(CLI, args);
    expect(full.code).toBe(0);
    expect(run(BIN, args)).toEqual(full);
  });

  it('hands usage errors and real commands to the full CLI, with its exit codes', () => {
    const bogus = run(BIN, ['--bogus']);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain("unknown option '--bogus'");
    const ls = run(BIN, ['ls']);
    expect(ls.code, 'no serve for that data dir').toBe(5);
    expect(ls.stderr).toContain('no berth controller is running');
  });
});
