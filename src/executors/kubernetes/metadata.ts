/**
 * The Kubernetes executor's durable inventory: what a checkpoint records (spec §4.1, Berth's keys)
 * and its validation without API calls (spec §7.1 / §8.2) before a reconnect, a stop or a destroy
 * acts on it. Pure.
 * @module
 */
import type { ResourceIdentity } from './compose/index.js';
import { CHECKPOINT, META } from './constants.js';
import type { Platform, WorkspaceMode } from './types.js';

export type AgentctlFlavor = 'bundle' | 'sea';

export interface KubernetesMetadata {
  /** The agentctl instance id; also the resource instance id the names and labels derive from. */
  instanceId: string;
  sessionId: string;
  executor: string;
  profile: string;
  namespace: string;
  mainContainer: string;
  platform: Platform;
  workspaceMode: WorkspaceMode;
  podName: string;
  /** Null until the Pod was created (a launch cut short in `storage`). */
  podUid: string | null;
  pvcName: string | null;
  pvcUid: string | null;
  /** True only for a managed PVC this session created (the only kind Berth ever deletes). */
  pvcCreated: boolean;
  /** The agentctl instance port inside the Pod (known once connected). */
  remotePort: number | null;
  /** The main container's restartCount when last connected (a higher one means agentctl restarted). */
  restartCount: number | null;
  agentctlFlavor: AgentctlFlavor | null;
  profileHash: string;
  templateHash: string;
  /**
   * Only in `pvc_creating` / `pod_creating`: the create-nonce digest of the object being created
   * (the PVC named from the instance id, or the Pod under `podName`), whose UID is not known yet.
   */
  pendingCreateDigest: string | null;
  /**
   * The recorded Pod is gone with all its containers (a stop deleted it gracefully and saw it go):
   * a new Pod under its name cannot meet them, so it needs no wait for its Running status.
   */
  podReclaimed: boolean;
  /** The session's NetworkPolicy (null: none, or not created yet). */
  policyName: string | null;
  policyUid: string | null;
}

const PROVISIONAL = new Set<string>(Object.values(CHECKPOINT));

/** The metadata map of a checkpoint (or of `ready`) for `state`. */
export function encodeKubernetesMetadata(m: KubernetesMetadata, state: string): Record<string, string> {
  const out: Record<string, string> = {
    [META.instanceId]: m.instanceId,
    [META.resourceInstanceId]: m.instanceId,
    [META.resourceSessionId]: m.sessionId,
    [META.resourceExecutor]: m.executor,
    [META.resourceProfile]: m.profile,
    [META.namespace]: m.namespace,
    [META.mainContainer]: m.mainContainer,
    [META.platform]: m.platform,
    [META.workspaceMode]: m.workspaceMode,
    [META.podName]: m.podName,
    [META.pvcCreated]: String(m.pvcCreated),
    [META.profileHash]: m.profileHash,
    [META.templateHash]: m.templateHash,
    [META.state]: state,
  };
  if (m.podUid !== null) out[META.podUid] = m.podUid;
  if (m.pvcName !== null) out[META.pvcName] = m.pvcName;
  if (m.pvcUid !== null) out[META.pvcUid] = m.pvcUid;
  if (m.remotePort !== null) out[META.remotePort] = String(m.remotePort);
  if (m.restartCount !== null) out[META.restartCount] = String(m.restartCount);
  if (m.agentctlFlavor !== null) out[META.agentctlFlavor] = m.agentctlFlavor;
  if (m.pendingCreateDigest !== null) out[META.pendingCreateDigest] = m.pendingCreateDigest;
  if (m.podReclaimed) out[META.podReclaimed] = 'true';
  if (m.policyName !== null) out[META.policyName] = m.policyName;
  if (m.policyUid !== null) out[META.policyUid] = m.policyUid;
  return out;
}

/** The identity the recorded objects' names and ownership labels derive from. */
export function identityOf(m: KubernetesMetadata): ResourceIdentity {
  return { instanceId: m.instanceId, sessionId: m.sessionId, executor: m.executor, profile: m.profile };
}

/** Thrown when recorded metadata is incomplete or inconsistent: nothing is touched on its account. */
export class KubernetesInventoryError extends Error {
  override readonly name = 'KubernetesInventoryError';
  constructor(detail: string) {
    super(`kubernetes inventory: ${detail}`);
  }
}

function required(meta: Readonly<Record<string, string>>, key: string): string {
  const value = meta[key];
  if (value === undefined || value === '') throw new KubernetesInventoryError(`${key} is missing`);
  return value;
}

function optional(meta: Readonly<Record<string, string>>, key: string): string | null {
  const value = meta[key];
  return value === undefined || value === '' ? null : value;
}

function int(meta: Readonly<Record<string, string>>, key: string, min: number, max: number): number | null {
  const raw = optional(meta, key);
  if (raw === null) return null;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) throw new KubernetesInventoryError(`${key} is not a number between ${min} and ${max}`);
  return n;
}

/**
 * Decodes and validates recorded metadata for `state` (the row's state): the identity keys agree,
 * the recorded objects fit the state (a `pvc_*` state records no Pod, a `pod_*` or final state
 * records one with its UID, a ready row its remote port), and the workspace fields fit the mode.
 */
export function decodeKubernetesMetadata(meta: Readonly<Record<string, string>>, state: string): KubernetesMetadata {
  const instanceId = required(meta, META.instanceId);
  if (required(meta, META.resourceInstanceId) !== instanceId) throw new KubernetesInventoryError('the agentctl instance id and the resource instance id differ');
  const platform = required(meta, META.platform);
  if (platform !== 'linux/amd64' && platform !== 'linux/arm64') throw new KubernetesInventoryError(`${META.platform} '${platform}' is not supported`);
  const workspaceMode = required(meta, META.workspaceMode);
  if (workspaceMode !== 'managed_pvc' && workspaceMode !== 'empty_dir' && workspaceMode !== 'existing_claim') {
    throw new KubernetesInventoryError(`${META.workspaceMode} '${workspaceMode}' is not a workspace mode`);
  }
  const pvcCreatedRaw = required(meta, META.pvcCreated);
  if (pvcCreatedRaw !== 'true' && pvcCreatedRaw !== 'false') throw new KubernetesInventoryError(`${META.pvcCreated} must be true or false`);
  const flavor = optional(meta, META.agentctlFlavor);
  const pendingCreateDigest = optional(meta, META.pendingCreateDigest);
  if (pendingCreateDigest !== null && !/^[0-9a-f]{64}$/.test(pendingCreateDigest)) throw new KubernetesInventoryError(`${META.pendingCreateDigest} is not a SHA-256 digest`);
  if (flavor !== null && flavor !== 'bundle' && flavor !== 'sea') throw new KubernetesInventoryError(`${META.agentctlFlavor} '${flavor}' is unknown`);
  const reclaimed = optional(meta, META.podReclaimed);
  if (reclaimed !== null && reclaimed !== 'true') throw new KubernetesInventoryError(`${META.podReclaimed} must be true when set`);
  const m: KubernetesMetadata = {
    instanceId,
    sessionId: required(meta, META.resourceSessionId),
    executor: required(meta, META.resourceExecutor),
    profile: required(meta, META.resourceProfile),
    namespace: required(meta, META.namespace),
    mainContainer: required(meta, META.mainContainer),
    platform,
    workspaceMode,
    podName: required(meta, META.podName),
    podUid: optional(meta, META.podUid),
    pvcName: optional(meta, META.pvcName),
    pvcUid: optional(meta, META.pvcUid),
    pvcCreated: pvcCreatedRaw === 'true',
    remotePort: int(meta, META.remotePort, 1, 65535),
    restartCount: int(meta, META.restartCount, 0, Number.MAX_SAFE_INTEGER),
    agentctlFlavor: flavor,
    profileHash: required(meta, META.profileHash),
    templateHash: required(meta, META.templateHash),
    pendingCreateDigest,
    podReclaimed: reclaimed === 'true',
    policyName: optional(meta, META.policyName),
    policyUid: optional(meta, META.policyUid),
  };
  if ((m.policyName === null) !== (m.policyUid === null)) throw new KubernetesInventoryError('the NetworkPolicy name and UID must be recorded together');
  checkWorkspace(m);
  checkState(m, state);
  return m;
}

function checkWorkspace(m: KubernetesMetadata): void {
  if ((m.pvcName === null) !== (m.pvcUid === null)) throw new KubernetesInventoryError('the PVC name and UID must be recorded together');
  if (m.workspaceMode === 'empty_dir' && (m.pvcName !== null || m.pvcCreated)) throw new KubernetesInventoryError('an empty_dir workspace records no PVC');
  if (m.workspaceMode === 'existing_claim' && m.pvcCreated) throw new KubernetesInventoryError('an existing claim is never recorded as created by Berth');
  if (m.pvcCreated && m.pvcName === null) throw new KubernetesInventoryError('a created PVC must be recorded with its name and UID');
}

function checkState(m: KubernetesMetadata, state: string): void {
  const creating = state === CHECKPOINT.pvcCreating || state === CHECKPOINT.podCreating;
  if (creating !== (m.pendingCreateDigest !== null)) {
    throw new KubernetesInventoryError(creating ? `state ${state} needs the digest of the object being created` : `state ${state} records an object being created`);
  }
  if (state === CHECKPOINT.pvcCreating) {
    if (m.podUid !== null || m.workspaceMode !== 'managed_pvc' || m.pvcCreated || m.pvcName !== null) throw new KubernetesInventoryError(`state ${state} is inconsistent with the recorded objects`);
    return;
  }
  if (state === CHECKPOINT.podCreating) {
    // the Pod's UID comes with its create; a managed claim is recorded by then
    if (m.podUid !== null || (m.workspaceMode === 'managed_pvc' && !m.pvcCreated)) throw new KubernetesInventoryError(`state ${state} is inconsistent with the recorded objects`);
    return;
  }
  if (state === CHECKPOINT.pvcCreated || state === CHECKPOINT.pvcAdmitted) {
    if (m.podUid !== null || m.workspaceMode !== 'managed_pvc' || !m.pvcCreated) throw new KubernetesInventoryError(`state ${state} is inconsistent with the recorded objects`);
    return;
  }
  if (PROVISIONAL.has(state) || state === 'ready' || state === 'stopped' || state === 'failed') {
    // `stopped`: the Pod was deleted by a stop; its last UID stays recorded (a resume creates a new one)
    if (m.podUid === null && state !== 'stopped') throw new KubernetesInventoryError(`state ${state} needs a recorded Pod UID`);
    if (state === 'ready' && m.remotePort === null) throw new KubernetesInventoryError('a ready row needs the agentctl instance port');
    return;
  }
  throw new KubernetesInventoryError(`state '${state}' is not a Kubernetes inventory state`);
}

/** Whether the recorded Pod passed admission verification (state after `pod_created`). */
export function podAdmissionVerified(state: string): boolean {
  return state !== CHECKPOINT.pvcCreating && state !== CHECKPOINT.podCreating && state !== CHECKPOINT.pvcCreated && state !== CHECKPOINT.pvcAdmitted && state !== CHECKPOINT.podCreated;
}

/** Whether the recorded PVC passed admission verification (state after `pvc_created`). */
export function pvcAdmissionVerified(state: string): boolean {
  return state !== CHECKPOINT.pvcCreating && state !== CHECKPOINT.pvcCreated;
}
