/**
 * The inventory contract of egress credentials and records (part of contract.ts's cases, run against
 * every backend): what the egress proxy (issue 23) relies on to authenticate a session's token and
 * to keep, page and sum what went through it.
 */
import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import { EGRESS_RECORDS_KEPT } from '../../../src/inventory/egress-records.js';
import { InventoryDuplicateError, InventoryFencedError } from '../../../src/inventory/errors.js';
import type { EgressRecordInput, Inventory } from '../../../src/inventory/inventory.js';
import type { SessionRecord } from '../../../src/inventory/records.js';
import type { ContractDatabase } from './contract.js';

interface EgressContractOptions {
  openFresh(opts?: { now?: () => Date }): Promise<{ db: ContractDatabase; store: Inventory }>;
  another(db: ContractDatabase): Promise<Inventory>;
  /** A new session row (contract.ts's). */
  session(id: string): Omit<SessionRecord, 'createdAt' | 'updatedAt'>;
}

const digest = (token: string) => createHash('sha256').update(token).digest('hex');

function record(sessionId: string, extra: Partial<EgressRecordInput> = {}): EgressRecordInput {
  return {
    sessionId,
    host: 'api.example.test',
    port: 443,
    method: 'CONNECT',
    allowed: true,
    reason: null,
    status: null,
    bytesUp: 10,
    bytesDown: 100,
    startedAt: 1_700_000_000_000,
    endedAt: 1_700_000_000_500,
    broker: null,
    inputTokens: null,
    outputTokens: null,
    ...extra,
  };
}

export function egressContract({ openFresh, another, session }: EgressContractOptions): void {
  it('egress credentials: found by digest, replaced per session, deleted; never for a missing session', async () => {
    const at = new Date('2026-03-01T10:00:00.000Z');
    const { db, store } = await openFresh({ now: () => at });
    await store.insertSession(session('s-1'));
    expect(await store.findEgressCredential(digest('tok-1')), 'none yet').toBeNull();
    expect(await store.putEgressCredential({ sessionId: 's-1', tokenDigest: digest('tok-1'), policy: '{"allow":["a.test"]}' })).toBe(true);
    expect(await store.findEgressCredential(digest('tok-1'))).toEqual({ sessionId: 's-1', tokenDigest: digest('tok-1'), policy: '{"allow":["a.test"]}', createdAt: at.toISOString() });

    expect(await store.putEgressCredential({ sessionId: 's-1', tokenDigest: digest('tok-2'), policy: '{}' }), 'a new token replaces the old').toBe(true);
    expect(await store.findEgressCredential(digest('tok-1')), 'the old token no longer authenticates').toBeNull();
    expect((await store.findEgressCredential(digest('tok-2')))?.policy).toBe('{}');
    expect(await store.putEgressCredential({ sessionId: 's-1', tokenDigest: digest('tok-2'), policy: '{"v":2}' }), 'written again (a retry)').toBe(true);
    expect((await store.findEgressCredential(digest('tok-2')))?.policy).toBe('{"v":2}');
    expect(await db.count('egress_credentials')).toBe(1);

    expect(await store.putEgressCredential({ sessionId: 'missing', tokenDigest: digest('tok-3'), policy: '{}' }), 'no such session: nothing written').toBe(false);
    expect(await store.findEgressCredential(digest('tok-3'))).toBeNull();
    await expect(store.putEgressCredential({ sessionId: 's-1', tokenDigest: 'tok-in-the-clear', policy: '{}' }), 'only a sha256 is stored').rejects.toThrow(TypeError);
    await expect(store.putEgressCredential({ sessionId: '', tokenDigest: digest('x'), policy: '{}' })).rejects.toThrow(TypeError);

    await store.deleteEgressCredential('s-1');
    expect(await store.findEgressCredential(digest('tok-2'))).toBeNull();
    await store.deleteEgressCredential('s-1');
    await store.deleteEgressCredential('missing');
    expect(await db.count('egress_credentials')).toBe(0);
  });

  it('egress credentials: a digest belongs to one session (InventoryDuplicateError, without the digest)', async () => {
    const { store } = await openFresh();
    await store.insertSession(session('s-1'));
    await store.insertSession(session('s-2'));
    await store.putEgressCredential({ sessionId: 's-1', tokenDigest: digest('shared'), policy: '{}' });
    const err = await store.putEgressCredential({ sessionId: 's-2', tokenDigest: digest('shared'), policy: '{}' }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(InventoryDuplicateError);
    expect(err?.message).toContain("'s-2'");
    expect(err?.message).not.toContain(digest('shared'));
    expect((await store.findEgressCredential(digest('shared')))?.sessionId, 'the holder keeps it').toBe('s-1');
  });

  it('egress records: appended in order, paged by seq, records of unknown sessions dropped, malformed batches refused whole', async () => {
    const { db, store } = await openFresh();
    await store.insertSession(session('s-1'));
    await store.insertSession(session('s-2'));
    expect(await store.listEgressRecords('s-1')).toEqual([]);
    const batch = [
      record('s-1', { host: 'a.test' }),
      record('gone', { host: 'dropped.test' }),
      record('s-2', { host: 'other.test' }),
      record('s-1', { host: 'b.test', allowed: false, reason: 'host not allowed', port: 80, method: 'GET', status: 403, bytesUp: 0, bytesDown: 0 }),
      record('s-1', { host: 'c.test', broker: 'anthropic', inputTokens: 12, outputTokens: 34, status: 200 }),
    ];
    expect(await store.appendEgressRecords(batch)).toBe(4);
    expect(await store.appendEgressRecords([]), 'an empty batch').toBe(0);
    expect(await store.appendEgressRecords([record('gone')]), 'only unknown sessions').toBe(0);
    expect(await db.count('egress_records')).toBe(4);

    const all = await store.listEgressRecords('s-1');
    expect(all.map((r) => r.host)).toEqual(['a.test', 'b.test', 'c.test']);
    const seqs = all.map((r) => r.seq);
    expect([...seqs].sort((a, b) => a - b), 'ascending').toEqual(seqs);
    expect(new Set(seqs).size).toBe(3);
    const { seq: _seq, ...denied } = all[1] as (typeof all)[number];
    expect(denied, 'every field round-trips').toEqual(batch[3]);
    expect(all[2]).toMatchObject({ broker: 'anthropic', inputTokens: 12, outputTokens: 34, status: 200, allowed: true, reason: null });

    expect((await store.listEgressRecords('s-1', { after: seqs[0] })).map((r) => r.host)).toEqual(['b.test', 'c.test']);
    expect((await store.listEgressRecords('s-1', { after: seqs[0], limit: 1 })).map((r) => r.host)).toEqual(['b.test']);
    expect(await store.listEgressRecords('s-1', { after: seqs[2] })).toEqual([]);
    await store.appendEgressRecords([record('s-1', { host: 'd.test' })]);
    expect((await store.listEgressRecords('s-1', { after: seqs[2] })).map((r) => r.host), 'a later append pages in after the last seen').toEqual(['d.test']);
    expect((await store.listEgressRecords('s-2')).map((r) => r.host)).toEqual(['other.test']);

    for (const bad of [{ sessionId: '' }, { bytesUp: -1 }, { port: 443.5 }, { port: 70_000 }, { host: '' }, { inputTokens: -3 }, { allowed: 'yes' as unknown as boolean }]) {
      await expect(store.appendEgressRecords([record('s-1', { host: 'never.test' }), record('s-1', bad)]), JSON.stringify(bad)).rejects.toThrow(TypeError);
    }
    expect((await store.listEgressRecords('s-1')).map((r) => r.host), 'nothing of a refused batch').not.toContain('never.test');
    await expect(store.listEgressRecords('s-1', { limit: 10_001 })).rejects.toThrow(TypeError);
    await expect(store.listEgressRecords('s-1', { limit: 0 })).rejects.toThrow(TypeError);
    await expect(store.listEgressRecords('s-1', { after: -1 })).rejects.toThrow(TypeError);
  });

  it('egress records: a session keeps its latest EGRESS_RECORDS_KEPT, pruned by the append that passes them', async () => {
    const { db, store } = await openFresh();
    await store.insertSession(session('s-1'));
    await store.insertSession(session('s-2'));
    expect(EGRESS_RECORDS_KEPT).toBe(10_000);
    await store.appendEgressRecords([record('s-2', { host: 'kept.test' })]);
    const many = Array.from({ length: EGRESS_RECORDS_KEPT + 50 }, (_, i) => record('s-1', { startedAt: i, endedAt: i }));
    expect(await store.appendEgressRecords(many), 'every row was written').toBe(EGRESS_RECORDS_KEPT + 50);
    expect(await db.count('egress_records')).toBe(EGRESS_RECORDS_KEPT + 1);
    const first = await store.listEgressRecords('s-1', { limit: 2 });
    expect(first.map((r) => r.startedAt), 'the oldest 50 are gone').toEqual([50, 51]);
    await store.appendEgressRecords([record('s-1', { startedAt: 99_999, endedAt: 99_999 })]);
    expect((await store.listEgressRecords('s-1', { limit: 1 })).map((r) => r.startedAt), 'one more in, the oldest out').toEqual([51]);
    const summary = await store.egressSummary('s-1');
    expect(summary.connections).toBe(EGRESS_RECORDS_KEPT);
    expect(summary.lastAt).toBe(99_999);
    expect((await store.listEgressRecords('s-2')).map((r) => r.host), 'another session keeps its own').toEqual(['kept.test']);
  });

  it('egress summary: sums over the kept records, zeros when there are none', async () => {
    const { store } = await openFresh();
    await store.insertSession(session('s-1'));
    await store.insertSession(session('s-2'));
    const zero = { connections: 0, denied: 0, bytesUp: 0, bytesDown: 0, lastAt: null, brokerRequests: 0, inputTokens: 0, outputTokens: 0 };
    expect(await store.egressSummary('s-1')).toEqual(zero);
    expect(await store.egressSummary('missing')).toEqual(zero);
    await store.appendEgressRecords([
      record('s-1', { bytesUp: 5_000_000_000, bytesDown: 7, endedAt: 3000 }),
      record('s-1', { allowed: false, reason: 'denied', bytesUp: 0, bytesDown: 0, endedAt: 2000 }),
      record('s-1', { broker: 'openai', inputTokens: 100, outputTokens: 20, bytesUp: 1, bytesDown: 2, endedAt: 5000 }),
      record('s-1', { broker: 'openai', inputTokens: null, outputTokens: 5, bytesUp: 1, bytesDown: 2, endedAt: 4000 }),
      record('s-2', { bytesUp: 999, bytesDown: 999, endedAt: 9000 }),
    ]);
    expect(await store.egressSummary('s-1')).toEqual({
      connections: 4,
      denied: 1,
      bytesUp: 5_000_000_002,
      bytesDown: 11,
      lastAt: 5000,
      brokerRequests: 2,
      inputTokens: 100,
      outputTokens: 25,
    });
  });

  it('egress: deleted with its session, and only with it', async () => {
    const { db, store } = await openFresh();
    await store.insertSession(session('s-1'));
    await store.insertSession(session('s-2'));
    await store.putEgressCredential({ sessionId: 's-1', tokenDigest: digest('t1'), policy: '{}' });
    await store.putEgressCredential({ sessionId: 's-2', tokenDigest: digest('t2'), policy: '{}' });
    await store.appendEgressRecords([record('s-1'), record('s-1'), record('s-2')]);
    await store.deleteSession('s-1');
    expect(await store.findEgressCredential(digest('t1'))).toBeNull();
    expect(await store.listEgressRecords('s-1')).toEqual([]);
    expect((await store.egressSummary('s-1')).connections).toBe(0);
    expect(await db.count('egress_credentials')).toBe(1);
    expect(await db.count('egress_records')).toBe(1);
    expect((await store.findEgressCredential(digest('t2')))?.sessionId).toBe('s-2');
    expect(await store.listEgressRecords('s-2')).toHaveLength(1);
  });

  it('egress: a deposed store’s writes are refused, and leave nothing', async () => {
    const { db, store: old } = await openFresh();
    const next = await another(db);
    expect(await old.claimFence({ holder: 'pod-a', generation: 1 })).toBe(true);
    await old.insertSession(session('s-1'));
    await old.putEgressCredential({ sessionId: 's-1', tokenDigest: digest('first'), policy: '{}' });
    await old.appendEgressRecords([record('s-1', { host: 'first.test' })]);
    expect(await next.claimFence({ holder: 'pod-b', generation: 2 })).toBe(true);
    const writes: [string, () => Promise<unknown>][] = [
      ['putEgressCredential', () => old.putEgressCredential({ sessionId: 's-1', tokenDigest: digest('late'), policy: '{}' })],
      ['deleteEgressCredential', () => old.deleteEgressCredential('s-1')],
      ['appendEgressRecords', () => old.appendEgressRecords([record('s-1', { host: 'late.test' })])],
    ];
    for (const [name, write] of writes) await expect(write(), name).rejects.toThrow(InventoryFencedError);
    expect((await next.findEgressCredential(digest('first')))?.sessionId).toBe('s-1');
    expect(await next.findEgressCredential(digest('late'))).toBeNull();
    expect((await next.listEgressRecords('s-1')).map((r) => r.host)).toEqual(['first.test']);
    expect((await old.egressSummary('s-1')).connections, 'reads still work').toBe(1);
  });
}
