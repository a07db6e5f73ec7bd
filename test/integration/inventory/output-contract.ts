/**
 * The inventory contract of recorded (mirrored) output (part of contract.ts's cases, run against
 * every backend): what `berth logs` of a stopped Kubernetes session relies on.
 */
import { expect, it } from 'vitest';
import { InventoryFencedError } from '../../../src/inventory/errors.js';
import type { Inventory } from '../../../src/inventory/inventory.js';
import type { SessionRecord } from '../../../src/inventory/records.js';
import type { ContractDatabase } from './contract.js';

interface OutputContractOptions {
  openFresh(opts?: { now?: () => Date }): Promise<{ db: ContractDatabase; store: Inventory }>;
  another(db: ContractDatabase): Promise<Inventory>;
  /** A new session row (contract.ts's). */
  session(id: string): Omit<SessionRecord, 'createdAt' | 'updatedAt'>;
}

const text = (s: string) => new TextEncoder().encode(s);
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** The chunks as `[seq, stream, text]`, comparable at a glance. */
function plain(chunks: { seq: number; stream: string; data: Uint8Array }[] | null): [number, string, string][] | null {
  return chunks === null ? null : chunks.map((c) => [c.seq, c.stream, new TextDecoder().decode(c.data)]);
}

export function recordedOutputContract({ openFresh, another, session }: OutputContractOptions): void {
  it('recorded output: round-trips a run (bytes or base64), reads from a sequence number, replaces a run written again', async () => {
    const { store } = await openFresh();
    await store.insertSession(session('s-1'));
    expect(await store.readRecordedOutput('s-1', 'agent-1'), 'nothing recorded yet').toBeNull();
    const wrote = await store.putRecordedOutput('s-1', 'agent-1', [
      { seq: 0, stream: 'stdout', data: text('ready for instructions\n') },
      { seq: 1, stream: 'stderr', data: b64('warn ✓\n') },
      { seq: 2, stream: 'stdout', data: new Uint8Array([0, 0xff, 0x0a]) },
    ]);
    expect(wrote).toBe(true);
    const all = await store.readRecordedOutput('s-1', 'agent-1');
    expect(plain(all)?.slice(0, 2)).toEqual([
      [0, 'stdout', 'ready for instructions\n'],
      [1, 'stderr', 'warn ✓\n'],
    ]);
    expect(all?.[2]?.data, 'bytes that are not text survive').toEqual(new Uint8Array([0, 0xff, 0x0a]));
    expect(plain(await store.readRecordedOutput('s-1', 'agent-1', 1))?.map(([seq]) => seq)).toEqual([1, 2]);
    expect(await store.readRecordedOutput('s-1', 'agent-1', 3), 'recorded, nothing from there on').toEqual([]);

    await store.putRecordedOutput('s-1', 'agent-1', [{ seq: 0, stream: 'stdout', data: text('again\n') }]);
    expect(plain(await store.readRecordedOutput('s-1', 'agent-1'))).toEqual([[0, 'stdout', 'again\n']]);
    expect(await store.putRecordedOutput('missing', 'agent-1', [{ seq: 0, stream: 'stdout', data: text('x') }]), 'no such session: nothing written').toBe(false);
    expect(await store.readRecordedOutput('missing', 'agent-1')).toBeNull();
  });

  it('recorded output: keeps the last maxBytes of a run (1 MiB by default) and the 2 latest written runs of a session', async () => {
    const { db, store } = await openFresh();
    await store.insertSession(session('s-1'));
    await store.insertSession(session('s-2'));
    const chunks = ['aaaa', 'bbbb', 'cccc', 'dddd'].map((s, seq) => ({ seq, stream: 'stdout' as const, data: text(s) }));
    await store.putRecordedOutput('s-1', 'agent-1', chunks, { maxBytes: 6 });
    expect(plain(await store.readRecordedOutput('s-1', 'agent-1')), 'whole chunks dropped from the front, the first kept one cut to its tail').toEqual([
      [2, 'stdout', 'cc'],
      [3, 'stdout', 'dddd'],
    ]);
    const big = Array.from({ length: 20 }, (_, seq) => ({ seq, stream: 'stdout' as const, data: new Uint8Array(64 * 1024).fill(65 + seq) }));
    await store.putRecordedOutput('s-1', 'agent-1', big);
    const kept = (await store.readRecordedOutput('s-1', 'agent-1')) ?? [];
    expect(kept.reduce((n, c) => n + c.data.length, 0)).toBe(1024 * 1024);
    expect(kept.map((c) => c.seq)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    await expect(store.putRecordedOutput('s-1', 'agent-1', chunks, { maxBytes: 0 })).rejects.toThrow(/maxBytes/);

    await store.putRecordedOutput('s-2', 'agent-1', chunks);
    await store.putRecordedOutput('s-1', 'agent-2', chunks);
    await store.putRecordedOutput('s-1', 'agent-3', chunks);
    expect(await store.readRecordedOutput('s-1', 'agent-1'), 'the oldest written run of s-1 is dropped').toBeNull();
    expect(await store.readRecordedOutput('s-1', 'agent-2')).not.toBeNull();
    expect(await store.readRecordedOutput('s-2', 'agent-1'), 'another session keeps its own').not.toBeNull();
    await store.putRecordedOutput('s-1', 'agent-2', chunks);
    await store.putRecordedOutput('s-1', 'agent-4', chunks);
    expect(await store.readRecordedOutput('s-1', 'agent-3'), 'written again, agent-2 is the newer of the two').toBeNull();
    expect(await store.readRecordedOutput('s-1', 'agent-2')).not.toBeNull();
    expect(await db.count('recorded_output')).toBe(3);
  });

  it('recorded output: deleted with its session, and only with it', async () => {
    const { db, store } = await openFresh();
    await store.insertSession(session('s-1'));
    await store.insertSession(session('s-2'));
    const chunk = [{ seq: 0, stream: 'stdout' as const, data: text('secret-looking output stays with its session\n') }];
    for (const id of ['s-1', 's-2']) await store.putRecordedOutput(id, 'agent-1', chunk);
    await store.putRecordedOutput('s-1', 'agent-2', chunk);
    await store.deleteSession('s-1');
    expect(await store.readRecordedOutput('s-1', 'agent-1')).toBeNull();
    expect(await store.readRecordedOutput('s-1', 'agent-2')).toBeNull();
    expect(await db.count('recorded_output')).toBe(1);
    expect(plain(await store.readRecordedOutput('s-2', 'agent-1'))).toEqual([[0, 'stdout', 'secret-looking output stays with its session\n']]);
  });

  it('recorded output: a deposed store’s writes are refused, and leave nothing', async () => {
    const { db, store: old } = await openFresh();
    const next = await another(db);
    expect(await old.claimFence({ holder: 'pod-a', generation: 1 })).toBe(true);
    await old.insertSession(session('s-1'));
    await old.putRecordedOutput('s-1', 'agent-1', [{ seq: 0, stream: 'stdout', data: text('first\n') }]);
    expect(await next.claimFence({ holder: 'pod-b', generation: 2 })).toBe(true);
    await expect(old.putRecordedOutput('s-1', 'agent-1', [{ seq: 0, stream: 'stdout', data: text('late\n') }])).rejects.toThrow(InventoryFencedError);
    await expect(old.putRecordedOutput('s-1', 'agent-2', [{ seq: 0, stream: 'stdout', data: text('late\n') }])).rejects.toThrow(InventoryFencedError);
    expect(plain(await next.readRecordedOutput('s-1', 'agent-1'))).toEqual([[0, 'stdout', 'first\n']]);
    expect(await next.readRecordedOutput('s-1', 'agent-2')).toBeNull();
  });
}
