import { describe, expect, it } from 'vitest';
import type { PoolMemberRecord, RuntimeRecord, SessionRecord } from '../inventory/index.js';
import type { Executor, SweepOwner } from '../executors/executor.js';
import { isClaimed, startUnrecordedSweeps } from './unrecorded-sweep.js';

/** A store with these sessions (id → state), runtime rows (session → instance) and pool members (ids). */
function store(sessions: Record<string, string>, rows: Record<string, string>, members: string[] = []) {
  return {
    listRuntime: () => Promise.resolve(Object.entries(rows).map(([sessionId, instanceId]) => ({ sessionId, instanceId }) as RuntimeRecord)),
    getSession: (id: string) => Promise.resolve(id in sessions ? ({ id, state: sessions[id] } as SessionRecord) : null),
    getPoolMember: (id: string) => Promise.resolve(members.includes(id) ? ({ id, state: 'ready' } as PoolMemberRecord) : null),
  };
}

describe('isClaimed (what the sweep of unrecorded objects never touches)', () => {
  it('claims an instance a runtime row records, whatever its session’s state', async () => {
    expect(await isClaimed(store({ s: 'stopped' }, { s: 'i' }), { sessionId: 's', instanceId: 'i' })).toBe(true);
    expect(await isClaimed(store({}, { other: 'i' }), { sessionId: 's', instanceId: 'i' })).toBe(true);
  });

  it('claims every instance of a session a launch, stop or remove may be working on', async () => {
    for (const state of ['launching', 'ready', 'stopping', 'removing']) {
      expect(await isClaimed(store({ s: state }, {}), { sessionId: 's', instanceId: 'i' }), state).toBe(true);
    }
  });

  it('claims the objects of a warm pool member, whose id is their owner instance id and whose session does not exist', async () => {
    expect(await isClaimed(store({}, {}, ['pm-1']), { sessionId: 'pm-1', instanceId: 'pm-1' })).toBe(true);
    expect(await isClaimed(store({}, {}, ['pm-1']), { sessionId: 'pm-2', instanceId: 'pm-2' }), 'another member, gone').toBe(false);
  });

  it('claims nothing for a settled session whose row does not record the instance, or a session that is gone', async () => {
    expect(await isClaimed(store({ s: 'failed' }, {}), { sessionId: 's', instanceId: 'i' })).toBe(false);
    expect(await isClaimed(store({ s: 'stopped' }, { s: 'newer' }), { sessionId: 's', instanceId: 'i' })).toBe(false);
    expect(await isClaimed(store({}, {}), { sessionId: 's', instanceId: 'i' })).toBe(false);
  });
});

describe('startUnrecordedSweeps', () => {
  it('starts the sweeps of every executor that has them, answering from the store as it is when asked, and stops them', async () => {
    let ask: ((o: SweepOwner) => boolean | Promise<boolean>) | null = null;
    let stopped = 0;
    const sweeping = { name: 'k8s', startSweeps: (f: (o: SweepOwner) => boolean | Promise<boolean>) => ((ask = f), () => Promise.resolve(void stopped++)) } as unknown as Executor;
    const plain = { name: 'local' } as unknown as Executor;
    const sessions: Record<string, string> = { s: 'launching' };
    const stop = startUnrecordedSweeps({ executors: new Map([['k8s', sweeping], ['local', plain]]), store: store(sessions, {}) as never });
    expect(ask).not.toBeNull();
    expect(await ask!({ sessionId: 's', instanceId: 'i' })).toBe(true);
    sessions.s = 'failed';
    expect(await ask!({ sessionId: 's', instanceId: 'i' }), 'the launch failed meanwhile: nothing claims it').toBe(false);
    await stop();
    expect(stopped).toBe(1);
  });
});
