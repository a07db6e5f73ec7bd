import { describe, expect, it } from 'vitest';
import { VERSION } from '../shared/version.js';
import { frontOutput } from './front.js';
import { commandHelp, mainHelp } from './help.js';
import { findCommand } from './registry.js';
import { versionLine } from './version-line.js';

describe('the front door', () => {
  it('answers help and version as the full CLI would', () => {
    expect(frontOutput([])).toBe(mainHelp(VERSION));
    expect(frontOutput(['--help'])).toBe(mainHelp(VERSION));
    expect(frontOutput(['help', 'ls'])).toBe(commandHelp(findCommand('ls')!));
    expect(frontOutput(['exec', '--help'])).toBe(commandHelp(findCommand('exec')!));
    expect(frontOutput(['--version'])).toBe(`berth ${VERSION}\n`);
    expect(frontOutput(['version'])).toBe(versionLine());
    expect(versionLine()).toBe(`berth ${VERSION} (node ${process.version}, ${process.platform}/${process.arch})\n`);
  });

  it('hands every other command line to the full CLI, malformed ones included', () => {
    for (const argv of [['ls'], ['version', '-o', 'json'], ['version', '-o', 'yaml'], ['exec', 'abc', '--', 'true'], ['--bogus'], ['help', 'nope'], ['nope'], ['status']]) {
      expect(frontOutput(argv), argv.join(' ')).toBeNull();
    }
  });
});
