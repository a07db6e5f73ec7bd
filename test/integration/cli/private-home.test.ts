/**
 * Issue 18, item 2 through the real CLI: `berth serve` runs with HOME pointing at a user home that
 * holds an SSH key and Berth's kubeconfig; `berth exec ID -- cat …` of each fails inside the
 * session's sandbox, `$HOME` is the session's private home, and `berth doctor` finds nothing
 * credential-like an agent could read.
 * @module
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, makeRepo, runCli, startServeProcess, stopProcess, tempDir } from './helpers.js';

describe('berth exec in a sandboxed local session cannot read the user’s credentials', () => {
  let root: string;
  let outside: string;
  let home: string;
  let dataDir: string;
  let serve: ChildProcess | undefined;
  let id = '';
  let env: Record<string, string>;

  beforeAll(async () => {
    ensureBuilt();
    root = tempDir('berth-cli-home-');
    // outside /tmp: the sandbox's private /tmp would hide a home there anyway
    outside = mkdtempSync('/var/tmp/berth-cli-home-');
    home = join(outside, 'home');
    dataDir = join(home, '.local', 'share', 'berth');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_ed25519'), 'ssh-private-key-5b1e\n', { mode: 0o600 });
    mkdirSync(join(home, '.config', 'berth'), { recursive: true });
    writeFileSync(join(home, '.config', 'berth', 'kubeconfig'), 'kubeconfig-token-77c0\n');
    env = { HOME: home };
    serve = (await startServeProcess(dataDir, [], env)).child;
    makeRepo(join(root, 'repo'));
    const launch = await runCli(['launch', '--repo', join(root, 'repo'), '--agent', 'demo', '--env', 'BERTH_DEMO_STEP_MS=0'], { dataDir, env });
    expect(launch.code, launch.stderr).toBe(0);
    id = /Session (\S+) is ready/.exec(launch.stdout)?.[1] ?? '';
    expect(id).not.toBe('');
  }, 120_000);

  afterAll(async () => {
    if (id !== '') await runCli(['rm', '--force', id], { dataDir, env });
    await stopProcess(serve);
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('fails to cat ~/.ssh/id_ed25519 and ~/.config/berth/kubeconfig of the user', async () => {
    for (const path of [join(home, '.ssh', 'id_ed25519'), join(home, '.config', 'berth', 'kubeconfig')]) {
      const r = await runCli(['exec', id, '--', 'cat', path], { dataDir, env });
      expect(r.code, `berth exec ${id} -- cat ${path}`).not.toBe(0);
      expect(r.stdout).toBe('');
    }
  });

  it('has $HOME set to the private home in the session dir', async () => {
    const r = await runCli(['exec', id, '--', 'sh', '-c', 'echo "$HOME"'], { dataDir, env });
    expect(r.stdout.trim()).toBe(join(dataDir, 'workspaces', id, 'home'));
  });

  it('berth doctor: no credential-like path is readable inside the sandbox', async () => {
    const r = await runCli(['doctor'], { dataDir, env });
    expect(r.stdout).toMatch(/ok {2}\s*agent reads \(local\)\s+no credential-like path is readable inside its sandbox/);
  });
});
