import { describe, expect, it } from 'vitest';
import { bwrapArgs, probeBubblewrap, type SandboxPlan } from './sandbox.js';

const plan: SandboxPlan = {
  hide: ['/data'],
  writable: ['/data/workspaces/s-1/repo', '/data/workspaces/s-1/agentctl-state'],
  hideFiles: [],
  readOnly: ['/opt/berth/dist/agentctl.cjs'],
  readOnlyAt: [],
  network: true,
  cwd: '/data/workspaces/s-1/repo',
};

/** The index of the `flag a b` triple (or -1). */
function at(args: string[], flag: string, a: string): number {
  return args.findIndex((v, i) => v === flag && args[i + 1] === a);
}

describe('bwrapArgs', () => {
  it('hides the data dir after binding / read-only, then binds the workspace and state dir back writable', () => {
    const args = bwrapArgs(plan);
    const root = at(args, '--ro-bind', '/');
    const hide = at(args, '--tmpfs', '/data');
    const tmp = at(args, '--tmpfs', '/tmp');
    expect(root).toBeGreaterThanOrEqual(0);
    expect(tmp).toBeGreaterThan(root);
    expect(hide).toBeGreaterThan(tmp);
    for (const w of plan.writable) expect(at(args, '--bind', w)).toBeGreaterThan(hide);
    expect(at(args, '--ro-bind', '/opt/berth/dist/agentctl.cjs')).toBeGreaterThan(hide);
    expect(args.slice(-2)).toEqual(['--chdir', plan.cwd]);
  });

  it('unshares pid/ipc/uts/user, drops capabilities, starts a new session, and never dies with berth serve', () => {
    const args = bwrapArgs(plan);
    for (const flag of ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--new-session']) expect(args).toContain(flag);
    expect(args[args.indexOf('--cap-drop') + 1]).toBe('ALL');
    expect(args).not.toContain('--die-with-parent');
    expect(args).not.toContain('--unshare-net');
  });

  it('unshares the network when the executor turns it off', () => {
    expect(bwrapArgs({ ...plan, network: false })).toContain('--unshare-net');
  });

  it('maps root to a non-zero id inside (nested sandboxes need it), and leaves other users as they are', () => {
    const asRoot = bwrapArgs(plan, 0);
    expect(asRoot.slice(asRoot.indexOf('--uid'), asRoot.indexOf('--uid') + 4)).toEqual(['--uid', '1000', '--gid', '1000']);
    expect(bwrapArgs(plan, 1234)).not.toContain('--uid');
  });

  it('never binds a path that would uncover the hidden data dir again', () => {
    const args = bwrapArgs({ ...plan, readOnly: ['/', '/data', '/work/bin/agent', '/tmp', '/proc'], hide: ['/data', '/work/data'] });
    expect(at(args, '--ro-bind', '/data')).toBe(-1);
    expect(args.filter((v, i) => v === '--ro-bind' && args[i + 1] === '/')).toHaveLength(1); // only the base bind, before the hiding
    expect(at(args, '--ro-bind', '/tmp')).toBe(-1);
    expect(at(args, '--ro-bind', '/proc')).toBe(-1);
    expect(at(args, '--ro-bind', '/work/bin/agent')).toBeGreaterThan(at(args, '--tmpfs', '/work/data'));
  });
});

describe('bwrapArgs with a private home', () => {
  // the data dir at its default place inside the user's home, which is hidden as a whole
  const home = '/home/u';
  const session = '/home/u/.local/share/berth/workspaces/s-1';
  const homePlan: SandboxPlan = {
    hide: [home, '/root', '/home/u/.local/share/berth', '/srv/exposed/.ssh'],
    hideFiles: ['/etc/kube/config'],
    writable: [`${session}/repo`, `${session}/agentctl-state`, `${session}/home`],
    readOnly: ['/home/u/berth/dist/agentctl-loader.cjs', '/home/u/berth/dist/agentctl.cjs', '/home/u/.gitconfig', '/srv/exposed'],
    readOnlyAt: [{ source: '/home/u/.gitconfig', dest: `${session}/home/.gitconfig` }],
    network: true,
    cwd: `${session}/repo`,
  };
  const args = bwrapArgs(homePlan);

  it('binds the workspace, state dir and private home after the tmpfs that hides the home around them', () => {
    for (const w of homePlan.writable) {
      expect(at(args, '--bind', w)).toBeGreaterThan(at(args, '--tmpfs', home));
      expect(at(args, '--bind', w)).toBeGreaterThan(at(args, '--tmpfs', '/home/u/.local/share/berth'));
    }
    expect(at(args, '--tmpfs', '/root')).toBeGreaterThan(at(args, '--tmpfs', '/tmp'));
  });

  it('keeps the agentctl start files and exposed files visible, the mirrored file above the private home', () => {
    for (const r of homePlan.readOnly) expect(at(args, '--ro-bind', r)).toBeGreaterThan(at(args, '--tmpfs', home));
    const i = args.findIndex((v, j) => v === '--ro-bind' && args[j + 1] === '/home/u/.gitconfig' && args[j + 2] === `${session}/home/.gitconfig`);
    expect(i).toBeGreaterThan(at(args, '--bind', `${session}/home`));
  });

  it('hides a file by binding /dev/null over it, and hides a secret inside an exposed directory again after the bind', () => {
    expect(at(args, '--ro-bind', '/dev/null')).toBeGreaterThan(at(args, '--tmpfs', '/tmp'));
    expect(args[at(args, '--ro-bind', '/dev/null') + 2]).toBe('/etc/kube/config');
    expect(at(args, '--tmpfs', '/srv/exposed/.ssh')).toBeGreaterThan(at(args, '--ro-bind', '/srv/exposed'));
  });

  it('drops a bind of exactly a hidden path: hiding wins', () => {
    const a = bwrapArgs({ ...homePlan, readOnly: [home, '/etc/kube/config'] });
    expect(at(a, '--ro-bind', home)).toBe(-1);
    expect(a.filter((v, i) => v === '--ro-bind' && a[i + 1] === '/etc/kube/config')).toHaveLength(0);
  });
});

describe('probeBubblewrap', () => {
  it('says plainly why there is no sandbox and how to fix or opt out when bwrap is missing', () => {
    const probe = probeBubblewrap({ bwrap: '/nonexistent/bwrap' });
    expect(probe.ok).toBe(false);
    if (!probe.ok) {
      expect(probe.reason).toMatch(/not installed/);
      expect(probe.fix).toMatch(/apt-get install bubblewrap/);
      expect(probe.fix).toMatch(/sandbox: none/);
    }
  });
});
