import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT_PROBE_MISMATCH, parseProbeOutput, PROBE_SCRIPT, probeGuard, type ProbeResult } from './probe.js';
import { runSh, SHELLS } from '../testing/compose-fixtures.js';

// A PATH holding only the tools named: the image "without Node" or "without gzip" of each case.
const bins = mkdtempSync(join(tmpdir(), 'berth-guard-'));
const pathWith = (...tools: string[]): string => {
  const dir = mkdtempSync(join(bins, 'p-'));
  for (const t of tools) {
    const real = runSh(['/bin/sh'], `command -v ${t}`).stdout.trim();
    if (real !== '') symlinkSync(real, join(dir, t));
  }
  return dir;
};
afterAll(() => rmSync(bins, { recursive: true, force: true }));

/** The guard of `probe`, then what the upload would do: prints `went-on` once past the guard. */
const guarded = (probe: ProbeResult): string => `${probeGuard(probe)}echo went-on\n`;

describe.each(SHELLS)('probeGuard under %s', (_label, shell) => {
  const here = parseProbeOutput(runSh(shell, PROBE_SCRIPT).stdout);
  const full = pathWith('node', 'gzip', 'uname');

  it('lets the exec go on where the image still has what the probe found, after one byte on stdout', () => {
    const r = runSh(shell, guarded(here), { env: { PATH: full } });
    expect(r).toMatchObject({ status: 0, stdout: '.went-on\n' });
  });

  it.each([
    ['Node is gone (the bundle was built for it)', { ...here, flavor: 'bundle' as const }, ['gzip', 'uname']],
    ['the CPU differs', { ...here, arch: here.arch === 'aarch64' ? 'x86_64' : 'aarch64' }, ['node', 'gzip', 'uname']],
  ])('exits %s before reading anything or printing', (_what, probe, tools) => {
    const r = runSh(shell, guarded(probe), { env: { PATH: pathWith(...tools) }, input: Buffer.from('stdin that must stay unread') });
    expect(r).toMatchObject({ status: EXIT_PROBE_MISMATCH, stdout: '' });
  });

  it('exits where gzip is gone (the upload is compressed), unless the shell brings its own', () => {
    const bare = pathWith('node', 'uname');
    // busybox sh runs its gzip applet whatever PATH holds: there, the compressed upload still works
    const ownGzip = runSh(shell, 'command -v gzip', { env: { PATH: bare } }).stdout.trim() !== '';
    const r = runSh(shell, guarded({ ...here, gzip: true }), { env: { PATH: bare }, input: Buffer.from('stdin that must stay unread') });
    expect(r).toMatchObject(ownGzip ? { status: 0, stdout: '.went-on\n' } : { status: EXIT_PROBE_MISMATCH, stdout: '' });
  });

  it('checks nothing the delivery does not rely on: the SEA build without gzip needs neither Node nor gzip', () => {
    const r = runSh(shell, guarded({ flavor: 'sea', nodeVersion: null, arch: here.arch, gzip: false }), { env: { PATH: pathWith('uname') } });
    expect(r).toMatchObject({ status: 0, stdout: '.went-on\n' });
  });
});
