import { describe, expect, it } from 'vitest';
import { bwrapArgs, probeBubblewrap, type SandboxPlan } from './sandbox.js';

const plan: SandboxPlan = {
  hide: ['/data'],
  writable: ['/data/workspaces/s-1/repo', '/data/workspaces/s-1/agentctl-state'],
  readOnly: ['/opt/berth/dist/agentctl.cjs'],
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

  it('never binds a path that would uncover the hidden data dir again', () => {
    const args = bwrapArgs({ ...plan, readOnly: ['/', '/data', '/work/bin/agent'], hide: ['/data', '/work/data'] });
    expect(at(args, '--ro-bind', '/data')).toBe(-1);
    expect(args.filter((v, i) => v === '--ro-bind' && args[i + 1] === '/')).toHaveLength(1); // only the base bind, before the hiding
    expect(at(args, '--ro-bind', '/work/bin/agent')).toBeGreaterThan(at(args, '--tmpfs', '/work/data'));
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
