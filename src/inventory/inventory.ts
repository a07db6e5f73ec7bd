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

/** A session's egress proxy credential (issue 23): only the sha256 (hex) of its token is stored. */
export interface EgressCredentialRecord {
  sessionId: string;
  /** The sha256 of the token, 64 lowercase hex digits; unique across sessions. */
  tokenDigest: string;
  /** JSON of the session's egress policy (opaque to the store). */
  policy: string;
  createdAt: string;
}

/** One connection (or request) through a session's egress proxy, as the proxy reports it. */
export interface EgressRecordInput {
  sessionId: string;
  host: string;
  port: number;
  method: string;
  allowed: boolean;
  reason: string | null;
  status: number | null;
  bytesUp: number;
  bytesDown: number;
  /** Epoch milliseconds. */
  startedAt: number;
  endedAt: number;
  /** The provider of a brokered (credential-injecting) request. */
  broker: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
}

export interface EgressRecordRow extends EgressRecordInput {
  /** Increasing per store (and, within a session, in the order the appends committed). */
  seq: number;
}

/** A session's egress over its kept records (zeros and a null `lastAt` when there are none). */
export interface EgressSummary {
  connections: number;
  denied: number;
  bytesUp: number;
  bytesDown: number;
  /** The latest `endedAt`. */
  lastAt: number | null;
  /** Records with a broker. */
  brokerRequests: number;
  inputTokens: number;
  outputTokens: number;
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
  /** Deletes a session, its runtime row, the secrets that row references, its recorded output and its egress credential and records. */
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

  /**
   * Stores the egress credential of a session, replacing its previous one (one per session). False
   * (nothing written) when the session does not exist; a digest held by another session:
   * InventoryDuplicateError. TypeError for a malformed record (a digest is 64 lowercase hex digits).
   */
  putEgressCredential(record: Omit<EgressCredentialRecord, 'createdAt'>): Promise<boolean>;
  /** The credential whose token has this digest; null when none. */
  findEgressCredential(tokenDigest: string): Promise<EgressCredentialRecord | null>;
  /** Deletes a session's egress credential; a missing one is fine. */
  deleteEgressCredential(sessionId: string): Promise<void>;
  /**
   * Appends egress records in one transaction (TypeError, nothing written, when one is malformed);
   * records of sessions that do not exist are dropped. Returns the rows inserted. Keeps only the
   * latest EGRESS_RECORDS_KEPT (10 000) of each session, the older ones deleted in that transaction.
   */
  appendEgressRecords(records: readonly EgressRecordInput[]): Promise<number>;
  /** A session's records after seq `opts.after` (default 0), ascending, at most `opts.limit` (default 1000, at most 10 000). */
  listEgressRecords(sessionId: string, opts?: { after?: number; limit?: number }): Promise<EgressRecordRow[]>;
  /** Totals over a session's kept records. */
  egressSummary(sessionId: string): Promise<EgressSummary>;

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
