import { afterEach, describe, expect, it } from 'vitest';
import { LeaderElector } from './elector.js';
import type { LeaderElectorOptions, LeaderEvent } from './options.js';
import { FakeLeaseStore } from './testing/fake-lease.js';
import type { FakeLeasePort } from './testing/fake-lease.js';
import { ManualTime } from './testing/manual-clock.js';

const LEASE_MS = 15_000;
const RENEW_MS = 10_000;
const RETRY_MS = 2_000;

interface Node {
  elector: LeaderElector;
  port: FakeLeasePort;
  events: LeaderEvent[];
  /** Fake time of every start and stop of a term. */
  log: { at: number; what: 'started' | 'stopped'; generation?: number }[];
  signals: AbortSignal[];
  leaders: (string | null)[];
}

function setup() {
  const time = new ManualTime();
  const store = new FakeLeaseStore();
  const nodes: Node[] = [];
  const make = (identity: string, extra: Partial<LeaderElectorOptions> & { wallOffsetMs?: number } = {}): Node => {
    const port = store.port(identity);
    const node: Node = { port, events: [], log: [], signals: [], leaders: [], elector: undefined as unknown as LeaderElector };
    node.elector = new LeaderElector({
      port,
      identity,
      leaseName: 'berth-controller',
      namespace: 'berth',
      clock: time.clock(extra.wallOffsetMs ?? 0),
      random: () => 0,
      onStartedLeading: ({ generation, signal }) => {
        node.log.push({ at: time.now, what: 'started', generation });
        node.signals.push(signal);
      },
      onStoppedLeading: () => {
        node.log.push({ at: time.now, what: 'stopped' });
      },
      onNewLeader: (leader) => node.leaders.push(leader),
      onEvent: (e) => node.events.push(e),
      ...extra,
    });
    nodes.push(node);
    return node;
  };
  return { time, store, make, nodes };
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

function track(env: ReturnType<typeof setup>) {
  cleanup = async () => {
    for (const n of env.nodes) await n.elector.stop();
  };
  return env;
}

describe('LeaderElector', () => {
  it('acquires a missing Lease at once, as generation 0', async () => {
    const env = track(setup());
    const a = env.make('a');
    a.elector.start();
    await env.time.advance(0);
    expect(a.elector.isLeader).toBe(true);
    expect(a.elector.leader).toBe('a');
    expect(a.elector.generation).toBe(0);
    expect(a.log).toEqual([{ at: 0, what: 'started', generation: 0 }]);
    expect(a.leaders).toEqual(['a']);
    expect(env.store.lease).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 });
    expect(a.events).toContainEqual({ type: 'started-leading', identity: 'a', generation: 0 });
  });

  it('acquires a released Lease (empty holder) at once, bumping the generation', async () => {
    const env = track(setup());
    env.store.put({ holderIdentity: '', leaseDurationSeconds: 1, acquireTime: null, renewTime: null, leaseTransitions: 4 });
    const a = env.make('a');
    a.elector.start();
    await env.time.advance(0);
    expect(a.elector.generation).toBe(5);
    expect(env.store.lease).toMatchObject({ holderIdentity: 'a', leaseTransitions: 5 });
  });

  it('renews every retryPeriod, keeping its generation and acquireTime', async () => {
    const env = track(setup());
    const a = env.make('a');
    a.elector.start();
    await env.time.advance(0);
    const first = env.store.lease!;
    await env.time.advance(RETRY_MS * 5);
    const later = env.store.lease!;
    expect(env.store.writes.map((w) => w.op)).toEqual(['create', 'replace', 'replace', 'replace', 'replace', 'replace']);
    expect(later.renewTime!.getTime() - first.renewTime!.getTime()).toBe(RETRY_MS * 5);
    expect(later.acquireTime).toEqual(first.acquireTime);
    expect(later.leaseTransitions).toBe(0);
    expect(a.elector.isLeader).toBe(true);
    expect(a.log).toHaveLength(1);
  });

  it('standby waits a full leaseDuration on its own clock from when it saw the record change, whatever renewTime says', async () => {
    const env = track(setup());
    // The leader's wall clock is an hour behind: its renewTime looks long expired to a naive reader.
    const a = env.make('a', { wallOffsetMs: -3_600_000 });
    a.elector.start();
    await env.time.advance(0);
    const b = env.make('b', { wallOffsetMs: 3_600_000 });
    b.elector.start();
    await env.time.advance(60_000);
    expect(b.elector.isLeader).toBe(false);
    expect(b.elector.leader).toBe('a');

    // a crashes: its last renewal happened at 60 000 (fake time); b saw it then at the latest.
    const lastWrite = 60_000;
    await a.elector.stop();
    const waited = await env.time.until(() => b.elector.isLeader, 30_000);
    const tookOverAt = env.time.now;
    expect(tookOverAt).toBeGreaterThanOrEqual(lastWrite + LEASE_MS);
    expect(tookOverAt).toBeLessThanOrEqual(lastWrite + LEASE_MS + RETRY_MS * 1.2 + 10);
    expect(waited).toBeGreaterThan(0);
  });

  it('takeover bumps the generation and reports the new leader', async () => {
    const env = track(setup());
    const a = env.make('a');
    const b = env.make('b');
    a.elector.start();
    await env.time.advance(0);
    b.elector.start();
    await env.time.advance(1);
    await a.elector.stop();
    await env.time.until(() => b.elector.isLeader, 30_000);
    expect(b.elector.generation).toBe(1);
    expect(b.log[0]).toMatchObject({ what: 'started', generation: 1 });
    expect(b.leaders).toEqual(['a', 'b']);
    expect(env.store.lease).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(a.signals[0]!.aborted).toBe(true);
    expect(a.events).toContainEqual({ type: 'stopped-leading', identity: 'a', generation: 0, reason: 'stopped' });
  });

  it('a leader whose renewals fail steps down at renewDeadline, before the standby may take over', async () => {
    const env = track(setup());
    const a = env.make('a');
    const b = env.make('b');
    a.elector.start();
    await env.time.advance(0);
    b.elector.start();
    await env.time.advance(RETRY_MS * 3);
    a.port.mode = 'fail';
    const lastRenewStart = env.store.writes.at(-1)!;
    expect(lastRenewStart.client).toBe('a');
    await env.time.until(() => b.elector.isLeader, 60_000);
    const stopped = a.log.find((l) => l.what === 'stopped')!;
    const started = b.log.find((l) => l.what === 'started')!;
    expect(stopped.at).toBeLessThan(started.at);
    expect(started.at - stopped.at).toBeGreaterThanOrEqual(LEASE_MS - RENEW_MS);
    expect(a.signals[0]!.aborted).toBe(true);
    expect(a.events).toContainEqual({ type: 'stopped-leading', identity: 'a', generation: 0, reason: 'renew-deadline' });
    expect(a.events.filter((e) => e.type === 'error').length).toBeGreaterThan(0);
    expect(b.elector.generation).toBe(1);

    // a comes back as a standby: it sees b's term and stays out.
    a.port.resume();
    await env.time.advance(RETRY_MS * 10);
    expect(a.elector.isLeader).toBe(false);
    expect(a.elector.leader).toBe('b');
    expect(b.elector.isLeader).toBe(true);
  });

  it('a renewal whose response comes back after the deadline does not extend the term', async () => {
    const env = track(setup());
    const a = env.make('a');
    a.elector.start();
    await env.time.advance(0);
    a.port.mode = 'hold-response';
    await env.time.advance(RENEW_MS + 1);
    expect(a.elector.isLeader).toBe(false);
    a.port.resume();
    await env.time.advance(RETRY_MS * 2);
    // The Lease is still a's: it starts a new term, with a new generation.
    expect(a.elector.isLeader).toBe(true);
    expect(a.elector.generation).toBe(1);
    expect(a.log.map((l) => l.what)).toEqual(['started', 'stopped', 'started']);
  });

  it('steps down at once when it sees another holder (the Lease was overwritten)', async () => {
    const env = track(setup());
    const a = env.make('a');
    a.elector.start();
    await env.time.advance(0);
    env.store.put({ holderIdentity: 'intruder', leaseDurationSeconds: 15, acquireTime: null, renewTime: null, leaseTransitions: 7 });
    await env.time.advance(RETRY_MS);
    expect(a.elector.isLeader).toBe(false);
    expect(a.elector.leader).toBe('intruder');
    expect(a.events).toContainEqual({ type: 'stopped-leading', identity: 'a', generation: 0, reason: 'lost' });
  });

  it('two electors racing for a missing Lease: one create wins, the other gets AlreadyExists and stands by', async () => {
    const env = track(setup());
    const a = env.make('a');
    const b = env.make('b');
    a.elector.start();
    b.elector.start();
    await env.time.advance(0);
    expect([a.elector.isLeader, b.elector.isLeader].filter(Boolean)).toHaveLength(1);
    expect(env.store.writes.filter((w) => w.op === 'create')).toHaveLength(1);
    // A lost write race is not an error.
    expect([...a.events, ...b.events].filter((e) => e.type === 'error')).toEqual([]);
  });

  it('two electors racing for a released Lease: the stale replace conflicts', async () => {
    const env = track(setup());
    env.store.put({ holderIdentity: '', leaseDurationSeconds: 1, acquireTime: null, renewTime: null, leaseTransitions: 2 });
    const a = env.make('a');
    const b = env.make('b');
    a.elector.start();
    b.elector.start();
    await env.time.advance(0);
    expect([a.elector.isLeader, b.elector.isLeader].filter(Boolean)).toHaveLength(1);
    expect(env.store.writes).toHaveLength(1);
    expect(env.store.lease!.leaseTransitions).toBe(3);
  });

  it('release() drains the term, then hands the Lease over at once', async () => {
    const env = track(setup());
    let holderWhileDraining: string | undefined;
    const a = env.make('a', {
      onStoppedLeading: async () => {
        await Promise.resolve();
        holderWhileDraining = env.store.lease?.holderIdentity;
      },
    });
    const b = env.make('b');
    a.elector.start();
    await env.time.advance(0);
    b.elector.start();
    await env.time.advance(RETRY_MS * 3);
    const releasedAt = env.time.now;
    expect(await a.elector.release()).toBe(true);
    expect(holderWhileDraining).toBe('a');
    expect(env.store.lease).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });
    await env.time.until(() => b.elector.isLeader, LEASE_MS);
    expect(env.time.now - releasedAt).toBeLessThanOrEqual(RETRY_MS * 1.2);
    expect(b.elector.generation).toBe(1);
    expect(a.signals[0]!.aborted).toBe(true);
    expect(a.events).toContainEqual({ type: 'stopped-leading', identity: 'a', generation: 0, reason: 'released' });
  });

  it('release() while an acquisition is out still hands back the Lease it wrote', async () => {
    const env = track(setup());
    const a = env.make('a');
    a.port.mode = 'hold-response';
    a.port.only = ['create'];
    a.elector.start();
    await env.time.advance(0);
    expect(env.store.lease?.holderIdentity).toBe('a');
    const released = a.elector.release();
    a.port.resume();
    expect(await released).toBe(true);
    expect(a.elector.isLeader).toBe(false);
    expect(a.log).toEqual([]);
    expect(env.store.lease).toMatchObject({ holderIdentity: '', leaseTransitions: 0 });
  });

  it('stop() then start() without awaiting keeps one loop', async () => {
    const env = track(setup());
    const a = env.make('a');
    a.elector.start();
    await env.time.advance(0);
    a.port.mode = 'hold-response';
    await env.time.advance(RETRY_MS);
    // A renewal is out when stop() begins; start() comes before it settles.
    void a.elector.stop();
    a.elector.start();
    a.port.resume();
    const before = a.port.calls;
    await env.time.advance(RETRY_MS * 5);
    // One loop: one get and one write per retryPeriod (the first term ended, a new one started).
    expect(a.port.calls - before).toBeLessThanOrEqual(2 * 6);
    expect(a.elector.isLeader).toBe(true);
  });

  it('release() by a standby writes nothing', async () => {
    const env = track(setup());
    const a = env.make('a');
    const b = env.make('b');
    a.elector.start();
    await env.time.advance(0);
    b.elector.start();
    await env.time.advance(1);
    const writes = env.store.writes.length;
    expect(await b.elector.release()).toBe(false);
    expect(env.store.writes).toHaveLength(writes);
  });

  it('a failing onStartedLeading is reported, not thrown', async () => {
    const env = track(setup());
    const a = env.make('a', {
      onStartedLeading: () => Promise.reject(new Error('boom')),
    });
    a.elector.start();
    await env.time.advance(0);
    expect(a.events).toContainEqual({ type: 'error', op: 'callback', error: new Error('boom') });
    expect(a.elector.isLeader).toBe(true);
  });

  it('refuses durations out of order, naming the option', () => {
    const store = new FakeLeaseStore();
    const base = { port: store.port('a'), identity: 'a', leaseName: 'l', namespace: 'n', onStartedLeading: () => undefined };
    expect(() => new LeaderElector({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow(
      'leader election: renewDeadlineMs (10000) must be less than leaseDurationMs (10000)',
    );
    expect(() => new LeaderElector({ ...base, retryPeriodMs: 9_000 })).toThrow(/renewDeadlineMs \(10000\) must exceed retryPeriodMs/);
    expect(() => new LeaderElector({ ...base, identity: ' ' })).toThrow('leader election: identity must not be empty');
  });
});
