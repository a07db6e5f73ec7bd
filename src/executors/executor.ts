/**
 * The contract every executor (local, later Kubernetes) implements, in the spirit of the spec's §1
 * table: create an instance (fresh or reconnect), stop (keep or destroy), refresh a dead connection,
 * report status, close. The manager owns inventory rows and secrets; an executor reports what it
 * created through the two inventory callbacks and never persists anything itself.
 * @module
 */
import type { PoolStore, PoolTarget } from './pool.js';
import type { ControlClient, InstanceClient } from '../agentctl-client/index.js';

/** A launch stage as reported by an executor (the manager turns these into StageRecords and events). */
export interface StageEvent {
  /** Stage name, e.g. `workspace`, `agentctl_start`, `agentctl_connect` (local) or `storage`, `pod_ready` (Kubernetes). */
  stage: string;
  status: 'running' | 'waiting' | 'succeeded' | 'failed';
  at: Date;
  /** While waiting or after failing: a short machine-readable reason (`CloneFailed`, `AgentctlExited` …). */
  reason?: string;
  /** Human-readable detail; never contains secrets. */
  message?: string;
}

/** Who an instance belongs to (spec §3.3 identity). */
export interface InstanceIdentity {
  /** The agentctl instance id; also the runtime row's instance id. */
  instanceId: string;
  sessionId: string;
  /** The task the session works on (Berth: one task per session, so the session id). */
  taskId: string;
  /** Environment (workspace) id; local: the session id. */
  environmentId: string;
}

export interface RepositorySpec {
  /** A clone URL (file://, git://, https://, ssh) … */
  url?: string;
  /** … or a local repository path. */
  path?: string;
  branch?: string;
}

/**
 * A credential for cloning over HTTP(S), split off the repository URL by the manager and kept in
 * the encrypted store. Executors hand it to git without argv, config files or logs.
 */
export interface RepositoryCredentials {
  username: string;
  /** May be empty (a token given as the user name). */
  password: string;
}

/** The executor profile as resolved at launch, recorded on the session so a resume or a replacement uses the same settings. */
export interface ExecutorProfileSnapshot {
  /** Name of the executor entry in the config. */
  executor: string;
  /** Name of the profile the launch named, or null when it named the executor entry itself. */
  profile: string | null;
  type: 'local' | 'kubernetes';
  /**
   * Executor settings a later instance of this session is built from (local: the agentctl path;
   * Kubernetes: the profile snapshot JSON). Never secrets.
   */
  settings: Readonly<Record<string, string>>;
  /** Profile environment (on top of the request env). */
  env: Readonly<Record<string, string>>;
}

/** The two secrets that let a controller reconnect to an instance; revealed by the manager from the encrypted store. */
export interface InstanceSecrets {
  /** The bearer token agentctl returned from the handshake. */
  authToken: string;
  /** The one-shot bootstrap nonce agentctl was started with (re-used when agentctl must be restarted). */
  bootstrapNonce: string;
}

/** A durable checkpoint: the executor's provisional state plus what it has created so far. */
export interface RuntimeCheckpoint {
  /** Executor-defined provisional state (`workspace_created`, `agentctl_started` …); never `ready`. */
  state: string;
  /** Persistable metadata (string values; secret values are filtered out by the inventory). */
  metadata: Readonly<Record<string, string>>;
}

export interface CreateInstanceRequest {
  identity: InstanceIdentity;
  /** The clone source; a URL never carries credentials here (see `repositoryCredentials`). */
  repository: RepositorySpec;
  /** The credential for cloning `repository.url` (revealed from the encrypted store); never persisted. */
  repositoryCredentials?: RepositoryCredentials;
  /** Environment of every process in the instance (request env + profile env). */
  env: Readonly<Record<string, string>>;
  /** Approved secret env, values resolved by the manager; handed to agentctl, never persisted. */
  secretEnv: Readonly<Record<string, string>>;
  profile: ExecutorProfileSnapshot;
  /**
   * Set to reconnect to (or revive) a recorded instance: the runtime row's metadata and the revealed
   * secrets. Absent for a fresh launch.
   */
  previous?: { metadata: Readonly<Record<string, string>>; secrets: InstanceSecrets };
  /** Stage start/end/waiting notifications. Must not throw. */
  onStage: (event: StageEvent) => void;
  /**
   * A non-fatal finding the user should see, outside any stage (e.g. the security warnings of a
   * Kubernetes Pod template): the controller emits it as a `diagnostic` session event, which
   * `berth launch` prints. `message` never contains secrets. Must not throw.
   */
  onDiagnostic?: (reason: string, message: string) => void;
  /**
   * Durably records a checkpoint; called right after each external side effect (spec §4.1). A
   * rejection fails the launch (and triggers rollback).
   */
  checkpointRuntimeInventory: (checkpoint: RuntimeCheckpoint) => Promise<void>;
  /** Deletes the provisional row after a successful rollback of a fresh launch (spec §4.9). */
  releaseRuntimeInventory?: () => Promise<void>;
  /** Aborts the launch (rollback still runs, under its own deadline). */
  signal?: AbortSignal;
}

/** What a refresh needs besides the instance: the session's env, approved secrets and recorded profile. */
export type RefreshRequest = Pick<CreateInstanceRequest, 'onStage' | 'checkpointRuntimeInventory' | 'secretEnv' | 'env' | 'profile' | 'signal'> & {
  /**
   * What the executor's own watch saw go wrong when it started this refresh (its `watchInstance`
   * trouble), if it did: the object may have been rewritten since (a kubelet drops an eviction's
   * reason from a Pod it did not evict itself), and the refresh still explains it as seen.
   */
  cause?: { reason: string; message: string };
};

/** A connected instance. */
export interface ExecutorInstance {
  identity: InstanceIdentity;
  executor: string;
  /** Where the repository lives, as agent processes see it. */
  workspacePath: string;
  /** Persistable metadata at `ready` (what a reconnect or a stop after restart needs). */
  metadata: Readonly<Record<string, string>>;
  /** Handed to the manager for the encrypted store; never logged. */
  secrets: InstanceSecrets;
  control: ControlClient;
  client: InstanceClient;
  /** True when this call (re)started agentctl or created the workspace, false on a pure reconnect. */
  revived: boolean;
  /** The argv that runs agentctl inside the instance (what `{{agentctl}}` in an agent command becomes). */
  agentctlCommand: readonly string[];
  /**
   * Set when this call replaced the instance's machine (a Kubernetes Pod that was deleted, evicted
   * or failed, recreated on the same volume): why (`PodDeleted`, `PodEvicted` …) and when it was
   * noticed. The agent that ran there ended with it; the manager decides whether to start it again.
   */
  replaced?: { reason: string; message: string; at: string };
  /**
   * Releases what this connection holds locally (port-forwards, sockets); the instance keeps running.
   * Idempotent. Called by the live-session map whenever an entry is replaced or taken.
   */
  close(): Promise<void>;
}

/** What a stop needs: a live instance or only the recorded inventory (a stop after a controller restart). */
export interface StopTarget {
  identity: InstanceIdentity;
  metadata: Readonly<Record<string, string>>;
  /** A live control client, when connected. */
  control?: ControlClient;
  /** The profile snapshot the session recorded (e.g. the Kubernetes cleanup script), when known. */
  profile?: ExecutorProfileSnapshot;
}

export interface StopOptions {
  /** Also remove the workspace (and everything else the instance owns). */
  destroy: boolean;
  /** Why (logged; e.g. `user_stop`, `session_removed`, `rollback`). */
  reason: string;
  /** Bounds the whole stop (verification, cleanup script, deletions and their waits). */
  signal?: AbortSignal;
}

/**
 * What a completed stop leaves for the runtime row: metadata keys to set (the executor's own keys;
 * e.g. that the stopped Pod is known to be gone with all its containers).
 */
export interface StopResult {
  metadata?: Readonly<Record<string, string>>;
}

export type InstanceLiveness = 'running' | 'unreachable' | 'stopped' | 'missing';

export interface InstanceStatus {
  liveness: InstanceLiveness;
  /** Human-readable detail (which pid, which port …). */
  detail: string;
}

/** Output an agent process left behind, as read without a running agentctl. */
export interface RecordedOutputChunk {
  seq: number;
  stream: 'stdout' | 'stderr';
  data: Uint8Array;
}

export interface Executor {
  readonly name: string;
  /** What this executor's type can do (the same object for every executor of the type). */
  readonly capabilities: ExecutorCapabilities;
  /** Fresh launch, or (with `req.previous`) reconnect/revive. Throws a LaunchError naming the failed stage. */
  createInstance(req: CreateInstanceRequest): Promise<ExecutorInstance>;
  /** Stops agentctl and its processes; with `destroy` also removes the workspace. Idempotent. */
  stopInstance(target: StopTarget, opts: StopOptions): Promise<StopResult | void>;
  /**
   * Re-establishes a dead connection to a running instance (a dropped forward, a restarted agentctl:
   * re-handshake with a fresh nonce, same instance id). No new side effects unless agentctl
   * died; never starts the agent (the manager decides that). Throws when the instance is gone.
   */
  refreshInstance(instance: ExecutorInstance, req: RefreshRequest): Promise<ExecutorInstance>;
  /** A cheap liveness check from the recorded metadata (no polling loops). */
  status(target: StopTarget): Promise<InstanceStatus>;
  /** Drops local connections; running instances keep running. */
  close(): Promise<void>;
  /**
   * Removes what a launch may have created before its first checkpoint, when the executor can find it
   * without a record (local: the session's own workspace dir). Optional.
   */
  removeUnrecorded?(sessionId: string): Promise<void>;
  /**
   * The recorded output of process `processId` of a (typically stopped) instance, from sequence
   * `from`, read from what agentctl left on disk; null when nothing was recorded for it. Optional:
   * the local executor can read its sessions' agentctl state directly; an executor without it (a
   * future Kubernetes one would answer through agentctl) leaves `logs` of stopped sessions refused.
   */
  readRecordedOutput?(target: StopTarget, processId: string, from: number): Promise<RecordedOutputChunk[] | null>;
  /**
   * Watches a ready instance for trouble its connection may not show yet (Kubernetes: its Pod was
   * deleted, failed or its container restarted) and calls `onTrouble` once with a reason and a
   * message; the returned function ends the watch. Optional: without it an instance is healed on
   * the next command that finds it unreachable.
   */
  watchInstance?(target: StopTarget, onTrouble: (reason: string, message: string) => void): () => void;
  /**
   * Starts the executor's sweep of what it created that no session records (Kubernetes: the Pods and
   * PVCs of creates that committed after their launch had given up on them), at once and then on its
   * own schedule; objects of another installation are only reported. `isRecorded` answers, from the
   * inventory as it is when asked, whether a session still claims an object's session or instance:
   * those are never touched. Returns the function that stops it (resolves once a sweep in flight
   * ended). Optional.
   */
  startSweeps?(isRecorded: (owner: SweepOwner) => boolean | Promise<boolean>): () => Promise<void>;
  /**
   * Keeps a warm pool (pool.ts) for each of `targets`, written through `store`; a fresh launch of one
   * of those profiles claims a ready member before it goes cold. Members of profiles no longer
   * listed (or with size 0) are removed. Returns the function that stops the refills (the members
   * stay, recorded, for the next start). Optional.
   */
  startPools?(targets: readonly PoolTarget[], store: PoolStore): () => Promise<void>;
  /**
   * Deletes the ready members of `profile`'s pool now (each made unclaimable first, then its
   * objects and row); the pool makes new ones while its size is above 0. Returns how many were
   * deleted. Optional: with `startPools`.
   */
  removePoolMembers?(profile: string): Promise<number>;
}

/**
 * What an executor type can do, declared by the type itself (a static `capabilities` on its class,
 * the same object on each instance), so that the controller, the inventory and the dashboard ask
 * this instead of branching on the type's name. What an executor may additionally *do* is declared
 * by the optional methods of {@link Executor}, each with a contract case of its own
 * (test/contract/cases-optional.ts): recorded output readable while stopped (`readRecordedOutput`),
 * an instance watch (`watchInstance`), cleanup of what a launch created before its first record
 * (`removeUnrecorded`) and sweeps of what no session records (`startSweeps`).
 */
export interface ExecutorCapabilities {
  /** A launch may name no repository: the instance starts with an empty workspace (else a URL or a path is required). */
  readonly repositoryOptional: boolean;
  /**
   * Repository URLs are cloned on the controller's host (its file system and network), so a
   * `file://` or `git://` URL is checked there before the session exists. A repository path is read
   * on the controller's host whatever the executor, and always checked.
   */
  readonly clonesOnControllerHost: boolean;
  /**
   * The prefix of the executor's own runtime metadata keys (`local_`): the inventory persists keys
   * under it, besides the keys every executor shares, and refuses any other.
   */
  readonly metadataKeyPrefix: string;
  /** What removing a session deletes, in words a confirmation shows ("the session's workspace directory"). */
  readonly removes: string;
  /** How a replacement of an instance's machine ({@link ExecutorInstance.replaced}) is told; absent: it never replaces one. */
  readonly replacement?: ReplacementWording;
}

/** The words of a replacement, in `berth status` (its stage) and in the session's diagnostics. */
export interface ReplacementWording {
  /** The stage that records why and when (`pod_replaced`). */
  readonly stage: string;
  /** What was replaced (`Pod`): "the agent ended with the replaced Pod". */
  readonly machine: string;
  /** What carries on (`a new Pod runs on the same volume`). */
  readonly note: string;
}

/** The replacement wording `capabilities` declare, or a neutral one for an executor that declares none. */
export function replacementWording(capabilities: ExecutorCapabilities): ReplacementWording {
  return capabilities.replacement ?? { stage: 'instance_replaced', machine: 'instance', note: 'a new instance runs on the same workspace' };
}

/** Who an object an executor created says it belongs to (Kubernetes: its ownership labels). */
export interface SweepOwner {
  sessionId: string;
  instanceId: string;
}
