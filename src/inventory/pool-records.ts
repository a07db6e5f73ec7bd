/**
 * Warm pool member rows: pre-provisioned workspaces (a Pod + PVC pair on Kubernetes) waiting for a
 * new session to claim them. The record, its row mapping (the same on both backends) and the pure
 * rules of its writes. No I/O here.
 * @module
 */
import { z } from 'zod';
import { InventoryCorruptError, InventoryDuplicateError } from './errors.js';
import { decode, nextTimestamp, persistentMetadata } from './records.js';

/** `creating` (being made, not claimable), `ready` (claimable), `claimed` (taken by a session). */
export type PoolMemberState = 'creating' | 'ready' | 'claimed';

export interface PoolMemberRecord {
  /** The member id: its agentctl instance id and its objects' owner id until a session claims it. */
  id: string;
  /** The executor entry's name. */
  executor: string;
  /** The profile (launch target) it was made for. */
  profile: string;
  /** The hash of the profile it was built from; a claim asks for the current one. */
  profileHash: string;
  state: PoolMemberState;
  /** The session that claimed it (set by the claim). */
  sessionId: string | null;
  /** The executor's record of the member's objects (names, UIDs): checked like a runtime row's metadata. */
  metadata: Record<string, string>;
  /** Secret references: a name → the id of an encrypted secret (deleted with the row). */
  secretRefs: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

/** A member to insert: it starts `creating`, unclaimed; the store stamps the times. */
export type NewPoolMember = Pick<PoolMemberRecord, 'id' | 'executor' | 'profile' | 'profileHash' | 'metadata' | 'secretRefs'>;

/** The fields a pool may change (a member becomes `claimed` only through a claim). */
export interface PoolMemberPatch {
  state?: 'creating' | 'ready';
  metadata?: Record<string, string>;
  secretRefs?: Record<string, string>;
}

/** What a claim asks for: the oldest ready member of this executor, profile and profile version. */
export interface PoolClaim {
  executor: string;
  profile: string;
  profileHash: string;
  sessionId: string;
}

export interface PoolMemberRow {
  id: string;
  executor: string;
  profile: string;
  profile_hash: string;
  state: string;
  session_id: string | null;
  metadata: string;
  secret_refs: string;
  created_at: string;
  updated_at: string;
}

/** The columns of `pool_members`, in the order of {@link poolMemberValues}. */
export const POOL_MEMBER_COLUMNS = 'id, executor, profile, profile_hash, state, session_id, metadata, secret_refs, created_at, updated_at';

export function poolMemberValues(r: PoolMemberRow): unknown[] {
  return [r.id, r.executor, r.profile, r.profile_hash, r.state, r.session_id, r.metadata, r.secret_refs, r.created_at, r.updated_at];
}

const STATES: readonly string[] = ['creating', 'ready', 'claimed'] satisfies PoolMemberState[];
const StringMapSchema = z.record(z.string(), z.string());

export function poolMemberFromRow(row: PoolMemberRow): PoolMemberRecord {
  const t = 'pool_members';
  if (!STATES.includes(row.state)) throw new InventoryCorruptError(t, row.id, `state: unknown '${row.state}'`);
  return {
    id: row.id,
    executor: row.executor,
    profile: row.profile,
    profileHash: row.profile_hash,
    state: row.state as PoolMemberState,
    sessionId: row.session_id,
    metadata: decode(StringMapSchema, row.metadata, t, row.id, 'metadata'),
    secretRefs: decode(StringMapSchema, row.secret_refs, t, row.id, 'secret_refs'),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The row for a record; metadata is checked by {@link persistentMetadata} here, the single write path. */
export function poolMemberToRow(record: PoolMemberRecord, keyPrefixes: readonly string[]): PoolMemberRow {
  return {
    id: record.id,
    executor: record.executor,
    profile: record.profile,
    profile_hash: record.profileHash,
    state: record.state,
    session_id: record.sessionId,
    metadata: JSON.stringify(persistentMetadata(record.metadata, keyPrefixes)),
    secret_refs: JSON.stringify(record.secretRefs),
    created_at: record.createdAt,
    updated_at: record.updatedAt,
  };
}

/** The record to insert: `creating`, unclaimed, created and updated now. */
export function insertedPoolMember(r: NewPoolMember, now: Date): PoolMemberRecord {
  const at = now.toISOString();
  return {
    id: r.id,
    executor: r.executor,
    profile: r.profile,
    profileHash: r.profileHash,
    state: 'creating',
    sessionId: null,
    metadata: { ...r.metadata },
    secretRefs: { ...r.secretRefs },
    createdAt: at,
    updatedAt: at,
  };
}

/**
 * The answer to inserting `row` when its id is taken by `existing`: the stored record when it is
 * exactly that row (a retried insert whose first attempt was committed but not acknowledged: the
 * row is stamped once per call), else InventoryDuplicateError.
 */
export function poolMemberOverExisting(existing: PoolMemberRow, row: PoolMemberRow): PoolMemberRecord {
  const same = (Object.keys(row) as (keyof PoolMemberRow)[]).every((k) => existing[k] === row[k]);
  if (!same) throw new InventoryDuplicateError(row.id, 'pool member');
  return poolMemberFromRow(existing);
}

/** The record after `patch`, or null (nothing to write) when `current` is missing or not in `expected`. */
export function patchedPoolMember(current: PoolMemberRecord | null, patch: PoolMemberPatch, expected: PoolMemberState, now: Date): PoolMemberRecord | null {
  if (current === null || current.state !== expected) return null;
  return {
    ...current,
    state: patch.state ?? current.state,
    metadata: patch.metadata ? { ...patch.metadata } : current.metadata,
    secretRefs: patch.secretRefs ? { ...patch.secretRefs } : current.secretRefs,
    updatedAt: nextTimestamp(current.updatedAt, now),
  };
}

/** The member as `claim` takes it. */
export function claimedPoolMember(current: PoolMemberRecord, claim: PoolClaim, now: Date): PoolMemberRecord {
  return { ...current, state: 'claimed', sessionId: claim.sessionId, updatedAt: nextTimestamp(current.updatedAt, now) };
}
