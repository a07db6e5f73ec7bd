/**
 * What every launch stage of the Kubernetes executor shares: the request, the cluster ports, the
 * parsed profile and identity, the inventory metadata as it grows, and a record of exactly what
 * *this* launch created (the only things its rollback may delete).
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { V1Container, V1ObjectMeta, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../../shared/logger.js';
import type { CreateInstanceRequest, StageEvent } from '../../executor.js';
import type { EgressProxyTarget } from '../../network.js';
import { REASON, reportStage, runStage } from '../../launch-kit/index.js';
import type { AgentctlArtifacts } from '../artifacts.js';
import { launchFailedEvent, launchSecrets, type EventRecorder } from '../event-recorder.js';
import { createNonceDigest, resourceNames, type ProbeResult, type ResourceIdentity } from '../compose/index.js';
import { ANNOTATION } from '../constants.js';
import type { FetchLike } from '../../../agentctl-client/index.js';
import type { EventObjectRef, KubePorts } from '../kube/index.js';
import { encodeKubernetesMetadata, type KubernetesMetadata } from '../metadata.js';
import { profileHash, templateHash } from '../config/index.js';
import type { KubernetesConnection, KubernetesProfile } from '../types.js';

/** What the executor hands every launch. */
export interface KubeLaunchEnv {
  executorName: string;
  connection: KubernetesConnection;
  /** The cluster: objects, exec, port-forward. */
  kube: KubePorts;
  /** How agentctl's HTTP API is called through a forward's loopback listener. */
  fetch: FetchLike;
  artifacts: AgentctlArtifacts;
  /** What each image's probe found (launch/pod-bootstrap.ts); shared by the executor's launches. */
  probes: Map<string, ProbeResult>;
  log: Logger;
  /** Source of create nonces and the bootstrap nonce (tests may fix it). */
  random: (size: number) => Uint8Array;
  /** Stamped on every Pod and PVC created (annotation `berth.dev/installation`; see sweep.ts); null: none. */
  installationId: string | null;
  /** Kubernetes Events about the session's objects (best effort). */
  events: EventRecorder;
  /** Where the Pods reach Berth's egress proxy (the executor's `egress_proxy`); null: none. */
  egressProxy: EgressProxyTarget | null;
}

export const defaultRandom = (size: number): Uint8Array => randomBytes(size);

/** The metadata of a launch before anything exists: the identity, where its objects go, the profile's hashes. */
export function initialMetadata(identity: ResourceIdentity, namespace: string, profile: KubernetesProfile): KubernetesMetadata {
  return {
    ...identity,
    namespace,
    mainContainer: profile.mainContainer,
    platform: profile.platform,
    workspaceMode: profile.workspace.mode,
    podName: resourceNames(identity.instanceId).pod,
    podUid: null,
    pvcName: null,
    pvcUid: null,
    pvcCreated: false,
    remotePort: null,
    restartCount: null,
    agentctlFlavor: null,
    profileHash: profileHash(profile),
    templateHash: templateHash(profile),
    pendingCreateDigest: null,
    podReclaimed: false,
    policyName: null,
    policyUid: null,
  };
}

/** An object this launch created (its rollback deletes it by UID). */
interface CreatedObject {
  name: string;
  uid: string;
}

export class KubeLaunchState {
  meta: KubernetesMetadata;
  createdPvc: CreatedObject | null = null;
  createdPod: CreatedObject | null = null;
  createdPolicy: CreatedObject | null = null;
  /** The Pod as last seen (created, then admitted, then from the watch). */
  pod: V1Pod | null = null;
  pvc: V1PersistentVolumeClaim | null = null;
  /**
   * Set by the launch's PodStart (start-pod.ts): creates its Pod behind Berth's scheduling gate,
   * which stage `storage` runs while a new managed claim binds (gate.ts). Never rejects: false when
   * the create failed, whose error stage `pod_ready` throws.
   */
  createGatedPod: (() => Promise<boolean>) | null = null;
  /** How the wait for a new managed claim ended (claim-binding.ts); what the gate's lift says. */
  claimBinding: 'bound' | 'first_consumer' | 'grace_over' | null = null;

  constructor(
    readonly env: KubeLaunchEnv,
    readonly req: CreateInstanceRequest,
    readonly profile: KubernetesProfile,
    readonly identity: ResourceIdentity,
    meta: KubernetesMetadata,
  ) {
    this.meta = meta;
  }

  get kube(): KubePorts {
    return this.env.kube;
  }

  get namespace(): string {
    return this.meta.namespace;
  }

  get signal(): AbortSignal | undefined {
    return this.req.signal;
  }

  /** The template's main container (validated to exist when the profile was parsed). */
  get mainContainer(): V1Container | undefined {
    return this.profile.template.spec?.containers.find((c) => c.name === this.profile.mainContainer);
  }

  /** Durably records the current metadata at `state` (spec §4.1: right after each side effect). */
  checkpoint(state: string): Promise<void> {
    return this.req.checkpointRuntimeInventory({ state, metadata: encodeKubernetesMetadata(this.meta, state) });
  }

  /**
   * Durably records, before a create, the object about to be created: its name is in the metadata
   * already, its create nonce goes in as a digest (spec §4.1 leaves a crash between a committed
   * create and its checkpoint to leak the object; Berth records the intent first).
   */
  checkpointPending(state: string, desired: { metadata?: V1ObjectMeta }): Promise<void> {
    const nonce = desired.metadata?.annotations?.[ANNOTATION.createNonce];
    if (nonce === undefined) throw new Error(`checkpoint ${state}: the object to create carries no create nonce`);
    this.meta = { ...this.meta, pendingCreateDigest: createNonceDigest(nonce) };
    return this.checkpoint(state);
  }

  /** Reports a stage event (a listener that throws is ignored). */
  report(event: Omit<StageEvent, 'at'>): void {
    reportStage(this.req.onStage, event);
  }

  /**
   * Writes the LaunchFailed Event of `err` (its stage and reason) on the Pod this launch created,
   * else on its claim; none when neither exists. Call it before the rollback deletes them. Best
   * effort and bounded (event-recorder.ts): it never throws.
   */
  async recordFailure(err: unknown, aftermath: string): Promise<void> {
    const regarding = this.#failureSubject();
    if (regarding === null) return;
    await this.env.events.emit(launchFailedEvent(regarding, this.identity.sessionId, err, aftermath), launchSecrets(this.req));
  }

  #failureSubject(): EventObjectRef | null {
    if (this.createdPod) return { kind: 'Pod', namespace: this.namespace, ...this.createdPod };
    const name = this.pvc?.metadata?.name;
    const uid = this.pvc?.metadata?.uid;
    return name && uid ? { kind: 'PersistentVolumeClaim', namespace: this.namespace, name, uid } : null;
  }

  /**
   * Runs one stage with start/end events (the launch kit's runner); any failure becomes a
   * LaunchError naming the stage, its reason the Kubernetes one (`Forbidden` …) where there is one.
   */
  stage<T>(name: string, fn: () => Promise<T>): Promise<T> {
    return runStage(this.req.onStage, name, fn, { reasonOf });
  }
}

/** The reason of a failure that is not a LaunchError yet: a KubeApiError's (`Forbidden` …), else `Error`. */
function reasonOf(err: unknown): string {
  const reason = (err as { reason?: unknown } | null | undefined)?.reason;
  return typeof reason === 'string' && /^[A-Za-z][A-Za-z0-9]*$/.test(reason) ? reason : REASON.stageFailed;
}
