/**
 * The warm pool's contract between the controller and an executor that keeps one (Kubernetes): the
 * member rows (kept by the inventory, structurally its `PoolMemberRecord`), the narrow store port a
 * pool writes them through, and what the controller asks for per profile.
 * @module
 */
type PoolMemberState = 'creating' | 'ready' | 'claimed';

/** One pre-provisioned member (a Pod + PVC pair on Kubernetes), as the inventory keeps it. */
export interface PoolMemberRow {
  /** The member id: its objects' owner id (instance and session labels) until a session claims it. */
  id: string;
  executor: string;
  profile: string;
  /** The hash of the profile it was built from; a claim asks for the current one. */
  profileHash: string;
  state: PoolMemberState;
  /** The session that claimed it. */
  sessionId: string | null;
  /** The executor's record of the member's objects (names, UIDs). */
  metadata: Record<string, string>;
  /** `{name: secret id}` of its encrypted secrets (the bootstrap nonce). */
  secretRefs: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

/** What a pool writes and reads (the inventory implements it). Every write is durable when it resolves. */
export interface PoolStore {
  insertPoolMember(r: Pick<PoolMemberRow, 'id' | 'executor' | 'profile' | 'profileHash' | 'metadata' | 'secretRefs'>): Promise<PoolMemberRow>;
  getPoolMember(id: string): Promise<PoolMemberRow | null>;
  listPoolMembers(filter?: { executor?: string; profile?: string }): Promise<PoolMemberRow[]>;
  /** Compare-and-swap on the state: null (nothing written) when the row is missing or in another state. */
  updatePoolMember(
    id: string,
    patch: Partial<Pick<PoolMemberRow, 'metadata' | 'secretRefs'>> & { state?: 'creating' | 'ready' },
    expect: { state: PoolMemberState },
  ): Promise<PoolMemberRow | null>;
  /** Atomically takes the oldest ready member of that executor, profile and hash for `sessionId`; null: none. */
  claimPoolMember(q: { executor: string; profile: string; profileHash: string; sessionId: string }): Promise<PoolMemberRow | null>;
  /** Deletes the row and the secrets it references; a missing row is fine. */
  deletePoolMember(id: string): Promise<void>;
  putSecret(id: string, plaintext: string): Promise<string>;
  revealSecret(id: string): Promise<string>;
  /** The runtime row of a session (a claim cut short by a crash: does the session record the member's objects?). */
  getRuntime(sessionId: string): Promise<{ metadata: Readonly<Record<string, string>> } | null>;
}

/** One profile's pool, as configured (`profiles.<name>.pool`). */
export interface PoolTarget {
  /** The profile's snapshot as a launch of it records it (the fields of `ExecutorProfileSnapshot` a pool reads). */
  snapshot: { executor: string; profile: string | null; settings: Readonly<Record<string, string>> };
  size: number;
  maxAgeMs: number;
  /** Members keep a clone of this repository (fetched every `refreshMs`); null: none. */
  repository: PoolRepository | null;
}

/** The repository a pool's members keep a clone of. */
export interface PoolRepository {
  url: string;
  branch: string | null;
  refreshMs: number;
}
