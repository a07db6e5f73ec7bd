/**
 * Test support (never imported by shipped code): an in-memory PoolStore (the inventory's pool
 * rows, secrets and runtime rows as a pool reads them), with the same compare-and-swap and claim
 * semantics as the real backends (test/integration/inventory proves those).
 * @module
 */
import type { PoolMemberRow, PoolStore } from '../../pool.js';

export class FakePoolStore implements PoolStore {
  readonly rows = new Map<string, PoolMemberRow>();
  readonly secrets = new Map<string, string>();
  readonly runtime = new Map<string, { metadata: Record<string, string> }>();
  #clock = 0;

  /** The real clock (ages count), strictly increasing (oldest-first order is exact). */
  #now(): string {
    this.#clock = Math.max(this.#clock + 1, Date.now());
    return new Date(this.#clock).toISOString();
  }

  async insertPoolMember(r: Pick<PoolMemberRow, 'id' | 'executor' | 'profile' | 'profileHash' | 'metadata' | 'secretRefs'>): Promise<PoolMemberRow> {
    await Promise.resolve();
    if (this.rows.has(r.id)) throw new Error(`duplicate pool member ${r.id}`);
    const at = this.#now();
    const row: PoolMemberRow = { ...r, state: 'creating', sessionId: null, createdAt: at, updatedAt: at };
    this.rows.set(r.id, row);
    return { ...row };
  }

  async getPoolMember(id: string): Promise<PoolMemberRow | null> {
    await Promise.resolve();
    const row = this.rows.get(id);
    return row ? { ...row } : null;
  }

  async listPoolMembers(filter: { executor?: string; profile?: string } = {}): Promise<PoolMemberRow[]> {
    await Promise.resolve();
    return [...this.rows.values()]
      .filter((r) => (filter.executor === undefined || r.executor === filter.executor) && (filter.profile === undefined || r.profile === filter.profile))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .map((r) => ({ ...r }));
  }

  async updatePoolMember(id: string, patch: Partial<Pick<PoolMemberRow, 'metadata' | 'secretRefs'>> & { state?: 'creating' | 'ready' }, expect: { state: PoolMemberRow['state'] }): Promise<PoolMemberRow | null> {
    await Promise.resolve();
    const row = this.rows.get(id);
    if (row === undefined || row.state !== expect.state) return null;
    Object.assign(row, patch, { updatedAt: this.#now() });
    return { ...row };
  }

  async claimPoolMember(q: { executor: string; profile: string; profileHash: string; sessionId: string }): Promise<PoolMemberRow | null> {
    await Promise.resolve();
    const row = [...this.rows.values()]
      .filter((r) => r.state === 'ready' && r.executor === q.executor && r.profile === q.profile && r.profileHash === q.profileHash)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0];
    if (row === undefined) return null;
    Object.assign(row, { state: 'claimed', sessionId: q.sessionId, updatedAt: this.#now() });
    return { ...row };
  }

  async deletePoolMember(id: string): Promise<void> {
    await Promise.resolve();
    const row = this.rows.get(id);
    if (row === undefined) return;
    for (const ref of Object.values(row.secretRefs)) this.secrets.delete(ref);
    this.rows.delete(id);
  }

  async putSecret(id: string, plaintext: string): Promise<string> {
    await Promise.resolve();
    this.secrets.set(id, plaintext);
    return id;
  }

  async revealSecret(id: string): Promise<string> {
    await Promise.resolve();
    const value = this.secrets.get(id);
    if (value === undefined) throw new Error(`secret ${id} is missing`);
    return value;
  }

  async getRuntime(sessionId: string): Promise<{ metadata: Readonly<Record<string, string>> } | null> {
    await Promise.resolve();
    return this.runtime.get(sessionId) ?? null;
  }
}
