/**
 * The narrow port the leader elector reads and writes its Lease through: one named Lease, read,
 * created and replaced under optimistic concurrency. The Kubernetes adapter is kube-lease-port.ts;
 * tests use testing/fake-lease.ts.
 * @module
 */

/** The fields of a `coordination.k8s.io/v1` Lease the elector uses. */
export interface LeaseRecord {
  /** Who holds the Lease; `''` when nobody does (released). */
  holderIdentity: string;
  /** How long the holder promises the Lease stays valid after `renewTime`, as the holder declared it. */
  leaseDurationSeconds: number;
  /** When the current holder took it (the holder's wall clock; informative only). */
  acquireTime: Date | null;
  /** When the holder last renewed it (the holder's wall clock; informative only: never compared). */
  renewTime: Date | null;
  /** How many times the holder changed (a new term of the same holder counts too): the generation. */
  leaseTransitions: number;
}

/** A Lease as read from the store: the record plus the version a replace must name. */
export interface LeaseState extends LeaseRecord {
  resourceVersion: string;
}

export interface LeasePort {
  /** The Lease, or null when it does not exist. */
  get(signal?: AbortSignal): Promise<LeaseState | null>;
  /** Creates the Lease; LeaseConflictError (`already-exists`) when it exists. */
  create(record: LeaseRecord, signal?: AbortSignal): Promise<LeaseState>;
  /**
   * Replaces the Lease if it is still at `state.resourceVersion`; LeaseConflictError (`conflict`)
   * when it changed meanwhile (or was deleted).
   */
  replace(state: LeaseState, signal?: AbortSignal): Promise<LeaseState>;
}

/** Why a write lost the optimistic-concurrency race. */
type LeaseConflictReason = 'conflict' | 'already-exists';

/** Thrown by a LeasePort write when another writer got there first (HTTP 409). */
export class LeaseConflictError extends Error {
  override readonly name = 'LeaseConflictError';
  readonly reason: LeaseConflictReason;

  constructor(lease: string, reason: LeaseConflictReason, options?: { cause?: unknown }) {
    super(
      reason === 'already-exists' ? `lease ${lease} already exists` : `lease ${lease} was modified by another writer`,
      options,
    );
    this.reason = reason;
  }
}

/** Thrown by a LeasePort for any other failure (API error, network, timeout); the message is sanitized. */
export class LeaseApiError extends Error {
  override readonly name = 'LeaseApiError';
  /** HTTP status; undefined when no response arrived. */
  readonly status: number | undefined;

  constructor(message: string, fields: { status?: number; cause?: unknown }) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.status = fields.status;
  }
}

/** Type guard that also survives duplicate module copies (compares `name`). */
export function isLeaseConflict(err: unknown): err is LeaseConflictError {
  return err instanceof LeaseConflictError || (err instanceof Error && err.name === 'LeaseConflictError');
}
