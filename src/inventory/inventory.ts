/**
 * The inventory's one interface, whichever backend holds it (SQLite on one machine, Postgres for a
 * team). Every write is durable when its promise resolves: a caller awaits a checkpoint before the
 * next side effect (spec §4.1).
 * @module
 */
import type { RecordedOutputInput, RecordedOutputOptions, RecordedOutputRecord } from './output-records.js';
import type { NewPoolMember, PoolClaim, PoolMemberPatch, PoolMemberRecord, PoolMemberState } from './pool-records.js';
import type { RuntimeRecord, SessionRecord } from './records.js';

/** A runtime row write: `updatedAt`/`createdAt` are assigned by the store. */
export type RuntimeUpsert = Omit<RuntimeRecord, 'createdAt' | 'updatedAt'>;

/** The mutable fields of a session. */
export type SessionPatch = Partial<Pick<SessionRecord, 'state' | 'error' | 'stages' | 'workspacePath' | 'name'>>;

/**
 * Who may write (the leader's Lease generation). A store opened with a fence refuses every write
 * once another holder has claimed a newer generation (InventoryFencedError): a deposed leader that
 * has not noticed yet cannot act on a session the new one owns.
 */
export interface InventoryFence {
  /** The Lease holder's identity (the controller Pod's name). */
  holder: string;
  /** The generation this holder claimed (the Lease's transitions count, or a counter the store keeps). */
  generation: number;
}

export interface Inventory {
  /** Which backend this is (`sqlite`, `postgres`), for metrics and `berth doctor`. */
  readonly backend: 'sqlite' | 'postgres';
  close(): Promise<void>;
  /** The applied schema version (the highest migration number). */
  schemaVersion(): Promise<number>;

  insertSession(record: Omit<SessionRecord, 'createdAt' | 'updatedAt'>): Promise<SessionRecord>;
  getSession(id: string): Promise<SessionRecord | null>;
  listSessions(): Promise<SessionRecord[]>;
  /** Updates the mutable fields of a session; the new record, or null when it does not exist. */
  updateSession(id: string, patch: SessionPatch): Promise<SessionRecord | null>;
  /** Deletes a session, its runtime row, the secrets that row references and its recorded output. */
  deleteSession(id: string): Promise<void>;

  getRuntime(sessionId: string): Promise<RuntimeRecord | null>;
  listRuntime(): Promise<RuntimeRecord[]>;
  /**
   * Writes the runtime row of a session (one per session). A row of another instance is replaced
   * only when `replaceInstance` names it (InventoryConflictError otherwise).
   */
  upsertRuntime(record: RuntimeUpsert, opts?: { replaceInstance?: string }): Promise<RuntimeRecord>;
  /** Compare-and-swap delete on (session, instance, updated_at); a missing row is fine. */
  releaseRuntime(sessionId: string, instanceId: string, updatedAt: string): Promise<void>;

  /**
   * Records a new warm pool member, `creating` and unclaimed; its metadata is checked as a runtime
   * row's is (InventoryMetadataError). An id taken by another member: InventoryDuplicateError (a
   * retried insert whose first attempt was committed gets the stored row).
   */
  insertPoolMember(record: NewPoolMember): Promise<PoolMemberRecord>;
  getPoolMember(id: string): Promise<PoolMemberRecord | null>;
  /** The members (of one executor, one profile), oldest first. */
  listPoolMembers(filter?: { executor?: string; profile?: string }): Promise<PoolMemberRecord[]>;
  /**
   * Compare-and-swap on the member's state: writes `patch` only while the member is in
   * `expect.state`; the new record, or null (nothing written) when it is missing or in another state.
   */
  updatePoolMember(id: string, patch: PoolMemberPatch, expect: { state: PoolMemberState }): Promise<PoolMemberRecord | null>;
  /**
   * Atomically takes the oldest `ready` member of that executor, profile and profile hash for
   * `sessionId` (it becomes `claimed`); null when there is none. Concurrent claims, from any
   * controller sharing the database, never get the same member.
   */
  claimPoolMember(claim: PoolClaim): Promise<PoolMemberRecord | null>;
  /** Deletes a member and the secrets it references; a missing member is fine. */
  deletePoolMember(id: string): Promise<void>;

  /**
   * Records the output of run `processId` of a session (its mirror, for an executor that cannot read
   * it while the session is stopped), replacing what was recorded of that run: only the last
   * `opts.maxBytes` (default 1 MiB), and only the session's 2 latest written runs are kept (this one
   * and the one written before). False (nothing written) when the session does not exist.
   */
  putRecordedOutput(sessionId: string, processId: string, chunks: readonly RecordedOutputInput[], opts?: RecordedOutputOptions): Promise<boolean>;
  /** The recorded output of run `processId` from sequence `from` on; null when that run is not recorded. */
  readRecordedOutput(sessionId: string, processId: string, from?: number): Promise<RecordedOutputRecord[] | null>;

  /** Encrypts and stores a secret under `id` (replacing one); returns the id. */
  putSecret(id: string, plaintext: string): Promise<string>;
  /** Decrypts a stored secret; SecretStoreError when missing or tampered. */
  revealSecret(id: string): Promise<string>;
  deleteSecret(id: string): Promise<void>;
  /** Ids of every stored secret (orphan sweeps, leak checks). */
  listSecretIds(): Promise<string[]>;

  /**
   * Records `fence` as the writer from now on, if its generation is at least the stored one; false
   * when a newer generation is stored (this holder was deposed). From the first call on, every write
   * through this store is checked against `fence` in its own transaction and refused
   * (InventoryFencedError) unless the stored fence is exactly it, so after `false` writes are refused
   * too. Before any call, writes are unchecked (a single controller).
   */
  claimFence(fence: InventoryFence): Promise<boolean>;

  /**
   * The installation id (32 hex digits) every replica of this Berth stamps on the objects it
   * creates, created on first use: the data dir's `state/installation-id` for SQLite, a row of the
   * database for Postgres (so a standby that takes over sweeps what the old leader created).
   */
  installationId(): Promise<string>;
}
