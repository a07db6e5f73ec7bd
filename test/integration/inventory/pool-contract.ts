/**
 * The inventory contract of warm pool member rows (part of contract.ts's cases, run against every
 * backend): what a pool and a claiming launch rely on.
 */
import { expect, it } from 'vitest';
import { InventoryDuplicateError, InventoryFencedError, InventoryMetadataError } from '../../../src/inventory/errors.js';
import type { Inventory } from '../../../src/inventory/inventory.js';
import type { NewPoolMember } from '../../../src/inventory/pool-records.js';
import type { ContractDatabase } from './contract.js';

interface PoolContractOptions {
  openFresh(opts?: { now?: () => Date }): Promise<{ db: ContractDatabase; store: Inventory }>;
  another(db: ContractDatabase): Promise<Inventory>;
}

export function member(id: string, extra: Partial<NewPoolMember> = {}): NewPoolMember {
  return { id, executor: 'kube', profile: 'small', profileHash: 'h1', metadata: { local_pod: `pod-${id}` }, secretRefs: {}, ...extra };
}

/** A clock one second further at every reading (the insert order is the age order). */
function ticking(): () => Date {
  let t = Date.parse('2026-04-04T00:00:00.000Z');
  return () => new Date((t += 1000));
}

/** Inserts `id` and moves it to `ready`. */
async function ready(store: Inventory, id: string, extra: Partial<NewPoolMember> = {}): Promise<void> {
  await store.insertPoolMember(member(id, extra));
  expect(await store.updatePoolMember(id, { state: 'ready' }, { state: 'creating' })).toMatchObject({ id, state: 'ready' });
}

export function poolMemberContract({ openFresh, another }: PoolContractOptions): void {
  it('pool members: inserts creating and unclaimed, gets, lists oldest first (by executor, profile), refuses a taken id', async () => {
    const { store } = await openFresh({ now: ticking() });
    const first = await store.insertPoolMember(member('pm-b', { secretRefs: { NONCE: 'pool-nonce-pm-b' } }));
    expect(first).toEqual({ ...member('pm-b', { secretRefs: { NONCE: 'pool-nonce-pm-b' } }), state: 'creating', sessionId: null, createdAt: '2026-04-04T00:00:01.000Z', updatedAt: '2026-04-04T00:00:01.000Z' });
    await store.insertPoolMember(member('pm-a', { profile: 'big' }));
    await store.insertPoolMember(member('pm-c', { executor: 'other' }));
    expect(await store.getPoolMember('pm-b')).toEqual(first);
    expect(await store.getPoolMember('missing')).toBeNull();
    expect((await store.listPoolMembers()).map((m) => m.id)).toEqual(['pm-b', 'pm-a', 'pm-c']);
    expect((await store.listPoolMembers({ executor: 'kube' })).map((m) => m.id)).toEqual(['pm-b', 'pm-a']);
    expect((await store.listPoolMembers({ executor: 'kube', profile: 'big' })).map((m) => m.id)).toEqual(['pm-a']);
    expect((await store.listPoolMembers({ profile: 'none' })).map((m) => m.id)).toEqual([]);
    await expect(store.insertPoolMember(member('pm-b', { profile: 'big' }))).rejects.toThrow(InventoryDuplicateError);
    await expect(store.insertPoolMember(member('pm-b'))).rejects.toThrow(/pool member 'pm-b' already exists/);
    expect(await store.getPoolMember('pm-b'), 'the refused insert changed nothing').toEqual(first);
  });

  it('pool members: deleting one deletes the secrets it references, and nothing else; deleting again is fine', async () => {
    const { store } = await openFresh();
    await store.putSecret('pool-nonce-pm-1', 'nonce-1');
    await store.putSecret('keep', 'v');
    await store.insertPoolMember(member('pm-1', { secretRefs: { NONCE: 'pool-nonce-pm-1' } }));
    await store.insertPoolMember(member('pm-2'));
    await store.deletePoolMember('pm-1');
    expect(await store.getPoolMember('pm-1')).toBeNull();
    expect(await store.listSecretIds()).toEqual(['keep']);
    expect((await store.listPoolMembers()).map((m) => m.id)).toEqual(['pm-2']);
    await expect(store.deletePoolMember('pm-1')).resolves.toBeUndefined();
  });

  it('pool members: an update is a compare-and-swap on the state: null and nothing written when the state differs or the row is missing', async () => {
    const fixed = new Date('2026-05-05T00:00:00.000Z');
    const { store } = await openFresh({ now: () => fixed });
    const created = await store.insertPoolMember(member('pm-1'));
    const updated = await store.updatePoolMember('pm-1', { metadata: { local_pod: 'p2', local_uid: 'u2' }, secretRefs: { NONCE: 'n' } }, { state: 'creating' });
    expect(updated).toEqual({ ...created, metadata: { local_pod: 'p2', local_uid: 'u2' }, secretRefs: { NONCE: 'n' }, updatedAt: updated!.updatedAt });
    expect(updated!.updatedAt > created.updatedAt, 'a newer updatedAt, even within one millisecond').toBe(true);
    expect(await store.updatePoolMember('pm-1', { state: 'ready', metadata: {} }, { state: 'ready' }), 'expects ready, is creating').toBeNull();
    expect(await store.getPoolMember('pm-1')).toEqual(updated);
    const isReady = await store.updatePoolMember('pm-1', { state: 'ready' }, { state: 'creating' });
    expect(isReady).toMatchObject({ state: 'ready', metadata: { local_pod: 'p2', local_uid: 'u2' }, secretRefs: { NONCE: 'n' } });
    expect(await store.updatePoolMember('pm-1', { state: 'creating' }, { state: 'creating' })).toBeNull();
    expect(await store.updatePoolMember('missing', { state: 'ready' }, { state: 'creating' })).toBeNull();
    expect(await store.getPoolMember('pm-1')).toEqual(isReady);
  });

  it('pool members: a claim takes the oldest ready member of that executor, profile and profile hash, and nothing else', async () => {
    const { store } = await openFresh({ now: ticking() });
    await store.insertPoolMember(member('pm-creating'));
    await ready(store, 'pm-old-hash', { profileHash: 'h0' });
    await ready(store, 'pm-other-profile', { profile: 'big' });
    await ready(store, 'pm-other-executor', { executor: 'other' });
    await ready(store, 'pm-1');
    await ready(store, 'pm-2');
    const q = { executor: 'kube', profile: 'small', profileHash: 'h1' };
    const claimed = await store.claimPoolMember({ ...q, sessionId: 's-1' });
    expect(claimed).toMatchObject({ id: 'pm-1', state: 'claimed', sessionId: 's-1', metadata: { local_pod: 'pod-pm-1' } });
    expect(await store.getPoolMember('pm-1')).toEqual(claimed);
    expect((await store.claimPoolMember({ ...q, sessionId: 's-2' }))?.id).toBe('pm-2');
    expect(await store.claimPoolMember({ ...q, sessionId: 's-3' }), 'no ready member of that version is left').toBeNull();
    expect((await store.claimPoolMember({ ...q, profileHash: 'h0', sessionId: 's-4' }))?.id).toBe('pm-old-hash');
    expect((await store.getPoolMember('pm-creating'))?.state).toBe('creating');
    expect((await store.getPoolMember('pm-other-profile'))?.state).toBe('ready');
    expect((await store.getPoolMember('pm-other-executor'))?.state).toBe('ready');
    expect(await store.updatePoolMember('pm-1', { state: 'ready' }, { state: 'ready' }), 'a claimed member is no longer ready').toBeNull();
  });

  it('pool members: concurrent claims from two controllers never get the same member', async () => {
    const { db, store: a } = await openFresh({ now: ticking() });
    const b = await another(db);
    for (const id of ['pm-1', 'pm-2', 'pm-3']) await ready(a, id);
    const q = { executor: 'kube', profile: 'small', profileHash: 'h1' };
    const claims = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => (n % 2 === 0 ? a : b).claimPoolMember({ ...q, sessionId: `s-${n}` })));
    const got = claims.filter((c) => c !== null);
    expect(got.map((c) => c.id).sort()).toEqual(['pm-1', 'pm-2', 'pm-3']);
    expect(claims.filter((c) => c === null)).toHaveLength(3);
    for (const c of got) expect((await b.getPoolMember(c.id))?.sessionId, 'the row names the session its claim returned to').toBe(c.sessionId);
  });

  it('pool members: refuses metadata it may not persist, naming the key, and stores nothing of it', async () => {
    const { db, store } = await openFresh();
    const bad = store.insertPoolMember(member('pm-1', { metadata: { local_pod: 'p', AGENTCTL_AUTH_TOKEN: 'raw-pool-token-in-metadata' } }));
    await expect(bad).rejects.toThrow(InventoryMetadataError);
    await expect(bad).rejects.toThrow(/AGENTCTL_AUTH_TOKEN/);
    expect(await store.getPoolMember('pm-1')).toBeNull();
    await store.insertPoolMember(member('pm-1'));
    await expect(store.updatePoolMember('pm-1', { metadata: { kube_pod: 'p' } }, { state: 'creating' })).rejects.toThrow(/not a known metadata key/);
    await expect(store.updatePoolMember('pm-1', { metadata: { local_nonce: 'raw-pool-nonce' } }, { state: 'creating' })).rejects.toThrow(/looks like a secret/);
    expect((await store.getPoolMember('pm-1'))?.metadata, 'the row keeps its last good version').toEqual({ local_pod: 'pod-pm-1' });
    const dump = await db.dump();
    for (const raw of ['raw-pool-token-in-metadata', 'raw-pool-nonce']) expect(dump).not.toContain(raw);
  });

  it('pool members: a deposed store’s writes are refused, and leave nothing', async () => {
    const { db, store: old } = await openFresh();
    const next = await another(db);
    expect(await old.claimFence({ holder: 'pod-a', generation: 1 })).toBe(true);
    await ready(old, 'pm-1');
    expect(await next.claimFence({ holder: 'pod-b', generation: 2 })).toBe(true);
    const q = { executor: 'kube', profile: 'small', profileHash: 'h1', sessionId: 's-1' };
    for (const write of [
      () => old.insertPoolMember(member('pm-2')),
      () => old.updatePoolMember('pm-1', { state: 'creating' }, { state: 'ready' }),
      () => old.claimPoolMember(q),
      () => old.deletePoolMember('pm-1'),
    ]) {
      await expect(write()).rejects.toThrow(InventoryFencedError);
    }
    expect((await old.listPoolMembers()).map((m) => [m.id, m.state])).toEqual([['pm-1', 'ready']]);
    expect((await next.claimPoolMember(q))?.id).toBe('pm-1');
  });
}
