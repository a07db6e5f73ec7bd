import { describe, expect, it } from 'vitest';
import type { EgressRecordRow, Inventory } from '../inventory/index.js';
import { readEgress } from './egress-view.js';
import { SessionNotFoundError } from './service.js';

/** A store with one session `s-1` and `n` records (seq 10, 20, …), listing as the inventory does. */
function store(n: number): { store: Inventory; listings: number } {
  const rows: EgressRecordRow[] = Array.from({ length: n }, (_, i) => ({
    seq: (i + 1) * 10,
    sessionId: 's-1',
    host: `h${i + 1}.example`,
    port: 443,
    method: 'CONNECT',
    allowed: i % 2 === 0,
    reason: i % 2 === 0 ? null : 'host not allowed',
    status: null,
    bytesUp: 1,
    bytesDown: 2,
    startedAt: 1_700_000_000_000 + i,
    endedAt: 1_700_000_000_500 + i,
    broker: null,
    inputTokens: null,
    outputTokens: null,
  }));
  const out = { listings: 0, store: {} as Inventory };
  out.store = {
    getSession: async (id: string) => (id === 's-1' ? { id } : null),
    egressSummary: async () => ({ connections: n, denied: Math.floor(n / 2), bytesUp: n, bytesDown: 2 * n, lastAt: n > 0 ? 1_700_000_000_500 + n - 1 : null, brokerRequests: 0, inputTokens: 0, outputTokens: 0 }),
    listEgressRecords: async (_id: string, opts: { after?: number; limit?: number } = {}) => {
      out.listings++;
      return rows.filter((r) => r.seq > (opts.after ?? 0)).slice(0, opts.limit ?? 1000);
    },
  } as unknown as Inventory;
  return out;
}

describe('readEgress', () => {
  it('pages ascending with after/limit, times as ISO, and sums up', async () => {
    const { store: s } = store(5);
    const page = await readEgress({ store: s }, 's-1', { after: 20, limit: 2 });
    expect(page.records.map((r) => r.seq)).toEqual([30, 40]);
    expect(page.records[0]).toMatchObject({ host: 'h3.example', allowed: true, startedAt: '2023-11-14T22:13:20.002Z' });
    expect(page.records[0]).not.toHaveProperty('sessionId');
    expect(page.summary).toMatchObject({ connections: 5, denied: 2, lastAt: '2023-11-14T22:13:20.504Z' });
  });

  it('reads the latest `tail` records (in order), also past one listing', async () => {
    const small = store(5);
    expect((await readEgress({ store: small.store }, 's-1', { tail: 2 })).records.map((r) => r.seq)).toEqual([40, 50]);
    const big = store(12_345);
    const page = await readEgress({ store: big.store }, 's-1', { tail: 3 });
    expect(page.records.map((r) => r.seq)).toEqual([123_430, 123_440, 123_450]);
    expect(big.listings).toBe(2);
  });

  it('answers the summary alone for limit 0, and refuses an unknown session or bad bounds', async () => {
    const s = store(3);
    expect((await readEgress({ store: s.store }, 's-1', { limit: 0 })).records).toEqual([]);
    expect(s.listings).toBe(0);
    await expect(readEgress({ store: s.store }, 'nope', {})).rejects.toBeInstanceOf(SessionNotFoundError);
    await expect(readEgress({ store: s.store }, 's-1', { limit: 10_001 })).rejects.toThrow(/limit: must be an integer from 0 to 10000/);
    await expect(readEgress({ store: s.store }, 's-1', { tail: 1, after: 3 })).rejects.toThrow(/tail: cannot be combined/);
  });
});
