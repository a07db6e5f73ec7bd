import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE, ensureBuilt, ROOT } from '../support/agentctl.js';

beforeAll(() => ensureBuilt());

const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [BUNDLE, ...args], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: 30_000 });

describe('agentctl command line', () => {
  it('prints the package version for --version', () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const res = run(['--version']);
    expect(res.status).toBe(0);
    expect(res.stdout.trim()).toBe(version);
  });

  it('prints usage with every environment variable for --help', () => {
    const res = run(['--help']);
    expect(res.status).toBe(0);
    for (const name of ['AGENTCTL_PORT', 'AGENTCTL_INSTANCE_PORTS', 'AGENTCTL_BOOTSTRAP_NONCE', 'AGENTCTL_STATE_DIR', 'AGENTCTL_STOP_GRACE_MS']) {
      expect(res.stdout).toContain(name);
    }
  });

  it.each([
    ['AGENTCTL_PORT', 'eighty'],
    ['AGENTCTL_INSTANCE_PORTS', '9-1'],
    ['AGENTCTL_MAX_PROCESSES', '-3'],
    ['AGENTCTL_LOG_LEVEL', 'chatty'],
  ])('exits 2 and names %s when it is malformed', (name, value) => {
    const res = run([], { [name]: value });
    expect(res.status).toBe(2);
    expect(res.stderr).toContain(`invalid configuration: ${name}:`);
  });

  it('exits 2 for an unknown argument', () => {
    const res = run(['--frobnicate']);
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('unknown argument --frobnicate');
  });
});
