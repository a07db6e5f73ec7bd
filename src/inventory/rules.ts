/**
 * The inventory's semantics as pure functions, shared by every backend: each backend reads the rows
 * it needs inside its transaction, asks these what to write (or which error to throw), and writes.
 * So SQLite and Postgres cannot drift apart in what a caller observes. No I/O here.
 * @module
 */
import { InventoryConflictError, InventoryDuplicateError, InventoryFencedError, SecretStoreError } from './errors.js';
import type { InventoryFence, RuntimeUpsert, SessionPatch } from './inventory.js';
import { nextTimestamp, type RuntimeRecord, type SessionRecord } from './records.js';

export type NewSession = Omit<SessionRecord, 'createdAt' | 'updatedAt'>;

/** The record to insert: created and updated now. */
export function insertedSession(record: NewSession, now: Date): SessionRecord {
  const at = now.toISOString();
  return { ...record, createdAt: at, updatedAt: at };
}

/**
 * The answer to inserting `record` when its id is taken by `existing`: the stored record when it has
 * the same content (a retried insert whose first attempt was committed but not acknowledged), else
 * InventoryDuplicateError.
 */
export function insertOverExisting(existing: SessionRecord, record: NewSession): SessionRecord {
  const { createdAt: _c, updatedAt: _u, ...content } = existing;
  if (canonical(content) !== canonical(record)) throw new InventoryDuplicateError(record.id);
  return existing;
}

/** JSON with object keys sorted (stored JSON comes back in another key order than it went in). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

export function patchedSession(current: SessionRecord, patch: SessionPatch, now: Date): SessionRecord {
  return { ...current, ...patch, updatedAt: nextTimestamp(current.updatedAt, now) };
}

/**
 * The runtime row to write over `current`: a row of another instance is replaced only when
 * `replaceInstance` names it (InventoryConflictError otherwise), so a stale launch cannot overwrite a
 * newer one. `createdAt` is kept while the instance stays; `updatedAt` always moves forward.
 */
export function upsertedRuntime(current: RuntimeRecord | null, record: RuntimeUpsert, opts: { replaceInstance?: string }, now: Date): RuntimeRecord {
  if (current && current.instanceId !== record.instanceId && current.instanceId !== opts.replaceInstance) {
    throw new InventoryConflictError(record.sessionId, record.instanceId, `the row belongs to instance '${current.instanceId}'`);
  }
  return {
    ...record,
    createdAt: current?.instanceId === record.instanceId ? current.createdAt : now.toISOString(),
    updatedAt: nextTimestamp(current?.updatedAt ?? null, now),
  };
}

/**
 * Whether the compare-and-swap release of (session, instance, updated_at) deletes `current`: false
 * when there is no row (already released); InventoryConflictError when the row was rotated to
 * another instance or updated since.
 */
export function releaseDeletes(current: RuntimeRecord | null, sessionId: string, instanceId: string, updatedAt: string): boolean {
  if (!current) return false;
  if (current.instanceId !== instanceId) throw new InventoryConflictError(sessionId, instanceId, `rotated to instance '${current.instanceId}'`);
  if (current.updatedAt !== updatedAt) throw new InventoryConflictError(sessionId, instanceId, `updated since ${updatedAt} (now ${current.updatedAt})`);
  return true;
}

/** Secret ids are chosen by the caller and derived from the owner (`agentctl-auth-<instance id>`). */
export function checkSecretId(id: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/.test(id)) throw new SecretStoreError(id, 'invalid secret id');
}

/** Whether `fence` may be claimed over the `stored` one: its generation is at least the stored one. */
export function mayClaim(fence: InventoryFence, stored: InventoryFence | null): boolean {
  return stored === null || fence.generation >= stored.generation;
}

/**
 * Checks, inside a write transaction, that this store's claim still stands: no claim yet means
 * single-controller mode (unchecked); otherwise the stored fence must be exactly the claim
 * (InventoryFencedError otherwise).
 */
export function checkFence(claim: InventoryFence | null, stored: InventoryFence | null): void {
  if (claim === null) return;
  if (stored !== null && stored.holder === claim.holder && stored.generation === claim.generation) return;
  throw new InventoryFencedError(claim, stored);
}

/** A validated fence (a holder name and a non-negative safe integer generation). */
export function checkedFence(fence: InventoryFence): InventoryFence {
  if (typeof fence.holder !== 'string' || fence.holder === '') throw new TypeError('inventory: a fence needs a non-empty holder');
  if (!Number.isSafeInteger(fence.generation) || fence.generation < 0) throw new TypeError('inventory: a fence generation must be a non-negative integer');
  return { holder: fence.holder, generation: fence.generation };
}
