/**
 * What a sandboxed local agent can read of the user's files (issue 18, item 2): a real sandboxed
 * session whose user has an SSH key, Berth's kubeconfig and a kubeconfig named by $KUBECONFIG gets a
 * private home instead of theirs, sees none of those, reads an exposed ~/.gitconfig without being
 * able to change it, and keeps what it wrote to $HOME across stop/resume. `berth doctor`'s probe of
 * the same sandbox finds nothing credential-like to read.
 * @module
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAgentReads } from '../../../src/cli/commands/doctor-sandbox.js';
import { findInstallRoot, resolveConfig } from '../../../src/config/index.js';
import { createController, type Controller } from '../../../src/controller/index.js';
import { probeBubblewrap } from '../../../src/executors/local/index.js';
import { agentctlBundle, cleanup, execText, makeRepo, restoreEnv, ROOT, teardownController, tempDir, waitForOutput } from './helpers.js';

const KEY = 'ssh-private-key-3d9c';
const KUBE = 'kubeconfig-token-a41e';
const GITCONFIG = '[user]\n\tname = Exposed Person\n';

describe('the private home of a sandboxed local agent', () => {
  let work: string;
  let outside: string;
  let home: string;
  let dataDir: string;
  let kubeFile: string;
  let c: Controller | undefined;
  let id: string;
  const saved = { HOME: process.env.HOME, PATH: process.env.PATH };

  const config = (local: Record<string, unknown>) =>
    resolveConfig(
      {
        executors: { local: { type: 'local', sandbox: 'bubblewrap', ...local } },
        agents: { sleeper: { command: ['sh', '-c', 'echo agent started; exec sleep 600'] }, installed: { command: ['berth-home-agent'] } },
      },
      { source: null, installRoot: findInstallRoot(join(ROOT, 'src', 'config')), homeDir: home },
    );

  beforeAll(async () => {
    expect(probeBubblewrap(), 'bubblewrap must work on the test machine (test/cluster/install-deps.sh installs it)').toMatchObject({ ok: true });
    work = tempDir('private-home');
    // outside /tmp: the sandbox's private /tmp would hide a home there anyway
    outside = mkdtempSync('/var/tmp/berth-it-home-');
    home = join(outside, 'home');
    // the data dir at its default place, inside the (hidden) home
    dataDir = join(home, '.local', 'share', 'berth');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_ed25519'), `${KEY}\n`, { mode: 0o600 });
    mkdirSync(join(home, '.config', 'berth'), { recursive: true });
    writeFileSync(join(home, '.config', 'berth', 'kubeconfig'), `${KUBE}\n`);
    writeFileSync(join(home, '.gitconfig'), GITCONFIG);
    mkdirSync(join(outside, 'kube'));
    kubeFile = join(outside, 'kube', 'config');
    writeFileSync(kubeFile, `${KUBE}\n`);
    // an agent program installed in the home, as Claude Code's native installer does
    mkdirSync(join(home, '.local', 'bin'), { recursive: true });
    writeFileSync(join(home, '.local', 'bin', 'berth-home-agent'), '#!/bin/sh\necho home agent ran; exec sleep 600\n', { mode: 0o755 });
    // as with `HOME=… KUBECONFIG=… berth serve`
    process.env.HOME = home;
    process.env.PATH = `${join(home, '.local', 'bin')}:${process.env.PATH ?? ''}`;
    const env = { ...process.env, KUBECONFIG: kubeFile };
    c = await createController({ dataDir, agentctlPath: agentctlBundle(work), config: config({ sandbox_expose: ['~/.gitconfig'] }), env });
    await c.recover();
    id = (await c.launch({ repository: { path: makeRepo(work, 'repo', 'private-home') }, agent: 'sleeper' })).id;
    expect((await c.waitUntilSettled(id)).state).toBe('ready');
  }, 60_000);

  afterAll(async () => {
    restoreEnv(saved);
    await teardownController(c, dataDir, work);
    cleanup(outside);
  });

  const sh = async (script: string) => execText(c!, id, ['sh', '-c', script]);
  const privateHome = () => join(dataDir, 'workspaces', id, 'home');

  it("cannot read the user's SSH key, Berth's kubeconfig or the $KUBECONFIG file", async () => {
    for (const path of [join(home, '.ssh', 'id_ed25519'), join(home, '.config', 'berth', 'kubeconfig'), kubeFile]) {
      const r = await sh(`cat '${path}'`);
      expect(r.exitCode, `cat ${path}`).not.toBe(0);
      expect(r.stdout).not.toMatch(/ssh-private-key|kubeconfig-token/);
    }
    expect((await sh("cat ~/.ssh/id_ed25519 ~/.config/berth/kubeconfig 2>/dev/null; ls -A ~/.ssh 2>/dev/null; echo done")).stdout).toBe('done\n');
    expect((await sh(`ls -A '${home}' /root`)).stdout.split('\n').filter((l) => l.startsWith('.ssh') || l.startsWith('.config'))).toEqual([]);
  });

  it('has HOME set to its private home, kept with the session', async () => {
    expect((await sh('echo "$HOME"')).stdout.trim()).toBe(privateHome());
  });

  it('reads an exposed ~/.gitconfig at its place and through $HOME, and cannot change it', async () => {
    expect((await sh(`cat '${join(home, '.gitconfig')}'`)).stdout).toBe(GITCONFIG);
    expect((await sh('git config --global user.name')).stdout.trim()).toBe('Exposed Person');
    const write = await sh(`echo '[core]' >> ~/.gitconfig || echo refused; echo '[core]' >> '${join(home, '.gitconfig')}' || echo refused`);
    expect(write.stdout).toBe('refused\nrefused\n');
    expect(readFileSync(join(home, '.gitconfig'), 'utf8')).toBe(GITCONFIG);
  });

  it('keeps a file written to $HOME across stop and resume', async () => {
    expect((await sh('mkdir -p ~/.tool && echo remembered > ~/.tool/state && echo ok')).stdout.trim()).toBe('ok');
    await c!.stop(id);
    expect((await c!.resume(id)).state).toBe('ready');
    expect((await sh('cat ~/.tool/state')).stdout.trim()).toBe('remembered');
    expect(readFileSync(join(privateHome(), '.tool', 'state'), 'utf8')).toBe('remembered\n');
  }, 60_000);

  it('berth doctor: its probe in the same sandbox finds nothing credential-like an agent could read', () => {
    const env = { ...process.env, KUBECONFIG: kubeFile };
    const [check] = checkAgentReads(config({ sandbox_expose: ['~/.gitconfig'] }), { dataDir, env });
    expect(check).toMatchObject({ name: 'agent reads (local)', ok: true, detail: 'no credential-like path is readable inside its sandbox' });
    expect(check?.warn).toBeUndefined();
  });

  it('berth doctor: lists a credential an agent can read once it is exposed, at its place and in the private home', () => {
    const [check] = checkAgentReads(config({ sandbox_expose: ['~/.ssh'] }), { dataDir, env: process.env });
    expect(check).toMatchObject({ ok: true, warn: true });
    expect(check?.detail).toContain(join(home, '.ssh'));
    expect(check?.detail).toContain('<private home>/.ssh');
  });

  it('runs an agent whose program is installed in the hidden home (found on PATH)', async () => {
    const other = (await c!.launch({ repository: { path: join(work, 'repo') }, agent: 'installed' })).id;
    expect((await c!.waitUntilSettled(other)).state).toBe('ready');
    await waitForOutput(c!, other, /home agent ran/);
    await c!.remove(other, { force: true });
  }, 60_000);

  it('removes the private home with the session', async () => {
    expect(existsSync(privateHome())).toBe(true);
    await c!.remove(id, { force: true });
    expect(existsSync(join(dataDir, 'workspaces', id))).toBe(false);
  }, 60_000);

  it('berth doctor: lists what unconfined agents can read', () => {
    const [check] = checkAgentReads(config({ sandbox: 'none' }), { dataDir, env: { ...process.env, KUBECONFIG: kubeFile } });
    expect(check).toMatchObject({ ok: true, warn: true });
    for (const p of [join(home, '.ssh'), join(home, '.config', 'berth'), kubeFile]) expect(check?.detail).toContain(p);
  });
});
