import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { readProcs, sweepScope, sweepSessionProcesses, sweepTargets, type ProcEntry } from './sweep.js';

const MARK = 'BERTH_SESSION_ID=ses-1';
const p = (pid: number, ppid: number, over: Partial<ProcEntry> = {}): ProcEntry => ({ pid, ppid, uid: 1000, state: 'S', environ: [MARK], ...over });

describe('sweepTargets', () => {
  const procs = [
    p(1, 0, { environ: null }),
    p(10, 1), // agentctl's parent (a shell carrying the marker too)
    p(20, 10), // agentctl
    p(30, 1), // a setsid daemon of the agent
    p(31, 30, { environ: ['PATH=/bin'] }), // a child that cleared its environment
    p(40, 1, { uid: 0 }), // another user's process with the marker
    p(50, 1, { state: 'Z' }), // a zombie
  ];

  it('in marker mode ends only same-uid processes carrying the marker, never agentctl or its ancestors', () => {
    expect(sweepTargets(procs, 20, { kind: 'marker', marker: MARK, uid: 1000 })).toEqual([30]);
  });

  it('as the pid namespace init ends every other live process', () => {
    expect(sweepTargets(procs, 20, { kind: 'namespace' })).toEqual([30, 31, 40]);
  });

  it('sweeps the whole namespace only as PID 1 with no other instance left, else by marker', () => {
    expect(sweepScope({ BERTH_SESSION_ID: 's' }, true, 1, 5)).toEqual({ kind: 'namespace' });
    expect(sweepScope({ BERTH_SESSION_ID: 's' }, false, 1, 5)).toEqual({ kind: 'marker', marker: 'BERTH_SESSION_ID=s', uid: 5 });
    expect(sweepScope({ BERTH_SESSION_ID: 's' }, true, 4242, 5)).toEqual({ kind: 'marker', marker: 'BERTH_SESSION_ID=s', uid: 5 });
    expect(sweepScope({}, true, 4242, 5), 'no marker: nothing is swept').toBeNull();
  });
});

describe('sweepSessionProcesses', () => {
  const started: number[] = [];
  afterEach(() => {
    for (const pid of started.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });

  function alive(pid: number): boolean {
    return readProcs('/proc', false).some((e) => e.pid === pid && e.state !== 'Z');
  }

  it('ends a setsid daemon of the session, even one ignoring SIGTERM, and spares a process without the marker', async () => {
    const session = `ses-${randomBytes(6).toString('hex')}`;
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    const daemon = spawn('setsid', ['sh', '-c', "trap '' TERM; sleep 1000 & wait"], { env: { ...env, BERTH_SESSION_ID: session }, detached: true, stdio: 'ignore' });
    const other = spawn('sleep', ['1000'], { env, detached: true, stdio: 'ignore' });
    daemon.unref();
    other.unref();
    started.push(daemon.pid as number, other.pid as number);
    // wait for the daemon's sleep to exist
    const marker = `BERTH_SESSION_ID=${session}`;
    for (let i = 0; i < 100 && readProcs().filter((e) => e.environ?.includes(marker)).length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    const mine = readProcs().filter((e) => e.environ?.includes(marker)).map((e) => e.pid);
    expect(mine.length).toBeGreaterThanOrEqual(2);

    const ended = await sweepSessionProcesses({ scope: { kind: 'marker', marker, uid: process.getuid?.() ?? 0 }, graceMs: 300 });
    expect(ended).toBeGreaterThanOrEqual(2);
    for (const pid of mine) expect(alive(pid), `pid ${pid} of the session is gone`).toBe(false);
    expect(alive(other.pid as number), 'a process without the marker is left alone').toBe(true);
  });
});
