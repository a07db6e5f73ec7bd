import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LaunchSandbox } from './sandbox.js';
import { buildSandboxPlan } from './sandbox-plan.js';
import { hiddenPaths, hostSecretPaths, mirrorInPrivateHome } from './sandbox-paths.js';

type Bubblewrap = Extract<LaunchSandbox, { kind: 'bubblewrap' }>;

describe('buildSandboxPlan', () => {
  let root: string;
  let home: string;
  let dist: string;
  let sessionDir: string;

  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'berth-plan-')));
    home = join(root, 'home');
    dist = join(root, 'install', 'dist');
    sessionDir = join(home, '.local', 'share', 'berth', 'workspaces', 's-1');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_ed25519'), 'key');
    writeFileSync(join(home, '.gitconfig'), '[user]\n');
    mkdirSync(join(sessionDir, 'repo'), { recursive: true });
    mkdirSync(dist, { recursive: true });
    for (const f of ['agentctl.cjs', 'agentctl-loader.cjs', 'agentctl.cjs.v8cache']) writeFileSync(join(dist, f), 'x');
    writeFileSync(join(root, 'kubeconfig'), 'apiVersion: v1\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const sandbox = (over: Partial<Bubblewrap> = {}): Bubblewrap => ({
    kind: 'bubblewrap',
    network: true,
    hide: hiddenPaths({ homes: [home], dataDir: join(home, '.local', 'share', 'berth'), extra: [join(root, 'kubeconfig'), join(root, 'absent')] }),
    readOnly: [process.execPath],
    expose: [join(home, '.gitconfig')],
    homes: [home],
    ...over,
  });

  it('binds every file the agentctl start command reads: the loader, the bundle and its code cache (an install under /tmp)', () => {
    const { plan } = buildSandboxPlan(sandbox(), { sessionDir, workspacePath: join(sessionDir, 'repo'), agentctlPath: join(dist, 'agentctl.cjs') });
    for (const f of ['agentctl.cjs', 'agentctl-loader.cjs', 'agentctl.cjs.v8cache']) expect(plan.readOnly).toContain(join(dist, f));
    expect(plan.readOnly).toContain(realpathSync(process.execPath));
  });

  it('also binds a start file reached through a symlink where the command names it', () => {
    const link = join(root, 'linked-dist');
    symlinkSync(dist, link);
    const { plan } = buildSandboxPlan(sandbox(), { sessionDir, workspacePath: join(sessionDir, 'repo'), agentctlPath: join(link, 'agentctl.cjs') });
    expect(plan.readOnlyAt).toContainEqual({ source: join(dist, 'agentctl-loader.cjs'), dest: join(link, 'agentctl-loader.cjs') });
  });

  it('creates the private home 0700 in the session dir and binds it writable with the workspace and state dir', () => {
    const { plan, privateHome } = buildSandboxPlan(sandbox(), { sessionDir, workspacePath: join(sessionDir, 'repo'), agentctlPath: join(dist, 'agentctl.cjs') });
    expect(privateHome).toBe(join(sessionDir, 'home'));
    expect(statSync(privateHome).mode & 0o777).toBe(0o700);
    expect(plan.writable).toEqual([join(sessionDir, 'repo'), join(sessionDir, 'agentctl-state'), privateHome]);
  });

  it('hides directories by tmpfs and files by /dev/null, drops absent and covered ones, and mirrors an exposed file into the private home', () => {
    const { plan, privateHome } = buildSandboxPlan(sandbox(), { sessionDir, workspacePath: join(sessionDir, 'repo'), agentctlPath: join(dist, 'agentctl.cjs') });
    expect(plan.hide).toContain(home);
    expect(plan.hide).not.toContain(join(home, '.local', 'share', 'berth')); // inside the hidden home, nothing bound on the way
    expect(plan.hideFiles).toEqual([join(root, 'kubeconfig')]);
    expect(plan.readOnly).toContain(join(home, '.gitconfig'));
    expect(plan.readOnlyAt).toContainEqual({ source: join(home, '.gitconfig'), dest: join(privateHome, '.gitconfig') });
  });

  it('removes a symlink the agent left where an exposed file is mirrored, and skips a mirror below a symlinked directory', () => {
    mkdirSync(join(sessionDir, 'home'), { recursive: true, mode: 0o700 });
    symlinkSync('/etc/passwd', join(sessionDir, 'home', '.gitconfig'));
    symlinkSync('/', join(sessionDir, 'home', '.config'));
    mkdirSync(join(home, '.config', 'tool'), { recursive: true });
    writeFileSync(join(home, '.config', 'tool', 'settings'), 'x');
    const { plan, privateHome } = buildSandboxPlan(sandbox({ expose: [join(home, '.gitconfig'), join(home, '.config', 'tool', 'settings')] }), {
      sessionDir,
      workspacePath: join(sessionDir, 'repo'),
      agentctlPath: join(dist, 'agentctl.cjs'),
    });
    expect(plan.readOnlyAt).toContainEqual({ source: join(home, '.gitconfig'), dest: join(privateHome, '.gitconfig') });
    expect(() => realpathSync(join(privateHome, '.gitconfig'))).toThrow();
    expect(plan.readOnlyAt.map((b) => b.dest)).not.toContain(join(privateHome, '.config', 'tool', 'settings'));
  });
});

describe('sandbox paths', () => {
  it('mirrors only paths inside a home, at the same relative place', () => {
    expect(mirrorInPrivateHome('/home/u/.config/git/config', ['/home/u'], '/p')).toBe('/p/.config/git/config');
    expect(mirrorInPrivateHome('/home/u', ['/home/u'], '/p')).toBeNull();
    expect(mirrorInPrivateHome('/home/user2/x', ['/home/u'], '/p')).toBeNull();
    expect(mirrorInPrivateHome('/etc/gitconfig', ['/home/u'], '/p')).toBeNull();
  });

  it('hides the configured kubeconfigs, $KUBECONFIG, ~/.kube, Berth config dir and config file', () => {
    const paths = hostSecretPaths({
      env: { KUBECONFIG: '/a/k1:/b/k2:relative', XDG_CONFIG_HOME: '/x/cfg' },
      homes: ['/home/u'],
      kubeconfigPaths: ['/etc/cluster/kubeconfig', null],
      configFile: '/etc/berth/berth.yaml',
    });
    expect(paths).toEqual(
      expect.arrayContaining(['/home/u/.kube', '/home/u/.config/berth', '/etc/cluster/kubeconfig', '/a/k1', '/b/k2', '/x/cfg/berth', '/etc/berth/berth.yaml']),
    );
    expect(paths).not.toContain('relative');
  });

  it('hides the homes, /root, /run/secrets and the data dir, never /', () => {
    const paths = hiddenPaths({ homes: ['/home/u', '/'], dataDir: '/data', extra: ['/srv/secret'] });
    expect(paths).toEqual(['/home/u', '/root', '/var/run/secrets', '/run/secrets', '/data', '/srv/secret']);
  });
});
