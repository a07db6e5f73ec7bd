/**
 * The Kubernetes executor: one Pod (+ PVC) per session, reached only through the Kubernetes API
 * (exec for the bootstrap, port-forward for agentctl). Fresh launches run `storage`, `pod_ready`,
 * `bootstrap`, `agentctl_connect`; a recorded instance is reconnected, or (after a stop, or when its
 * Pod is gone) given a new Pod on the same claim, built from the session's profile snapshot.
 * Connection settings are the *current* executor config; a recorded session keeps its *recorded*
 * namespace (spec §2.1 trust rule).
 * @module
 */
import { KeyedLock } from '../../shared/locks.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import { errorMessage } from '../../shared/errors.js';
import type { CreateInstanceRequest, Executor, ExecutorInstance, InstanceStatus, RefreshRequest, StopOptions, StopResult, StopTarget, SweepOwner } from '../executor.js';
import { INIT_STAGE, isLaunchError, LaunchError, REASON, REPLACEMENT_STAGE } from '../launch-kit/index.js';
import { AgentctlArtifacts, type AgentctlArtifactPaths } from './artifacts.js';
import { validateIdentity, type ProbeResult, type ResourceIdentity } from './compose/index.js';
import { decodeProfileSnapshot } from './config/index.js';
import type { FetchLike } from '../../agentctl-client/index.js';
import { httpFetch } from '../../shared/http-fetch.js';
import { createKubeClient, kubePorts, type KubePorts } from './kube/index.js';
import type { EgressProxyTarget } from '../network.js';
import { defaultRandom, initialMetadata, KubeLaunchState, type KubeLaunchEnv } from './launch/context.js';
import { claimLaunch, reportPoolOutcome } from './pool/claim.js';
import type { PoolContext } from './pool/context.js';
import { WarmPools } from './pool/pool.js';
import type { PoolStore, PoolTarget } from '../pool.js';
import { freshLaunch, rollback } from './launch/fresh.js';
import { reviveLaunch } from './launch/revive.js';
import { identityOf, type KubernetesMetadata } from './metadata.js';
import { PROFILE_SETTING, recordedMetadata, stopKubernetesInstance } from './stop.js';
import { LABEL, LABEL_VALUE } from './constants.js';
import { PodWatches } from './pod-watch.js';
import { EventRecorder } from './event-recorder.js';
import { sweepUnrecorded, type SweepReport } from './sweep.js';
import { SWEEP_TIMEOUT_MS, SweepSchedule, UNRESOLVED_CREATE_REASONS } from './sweep-schedule.js';
import type { KubernetesConnection, KubernetesProfile } from './types.js';

interface KubernetesExecutorOptions {
  name: string;
  connection: KubernetesConnection;
  artifacts: AgentctlArtifactPaths;
  logger?: Logger;
  /** Where `$KUBECONFIG` and `$HOME` are read from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /**
   * The data dir's installation id, stamped on every object created; the sweep deletes only
   * unrecorded objects that carry it. Null: nothing is stamped and nothing is swept.
   */
  installationId?: string | null;
  /** The cluster, when not built from `connection` (tests: recording fakes). */
  kube?: KubePorts;
  /** How agentctl is called through a forward. @default httpFetch */
  fetch?: FetchLike;
  /** Where the Pods reach Berth's egress proxy (sessions with `network:` settings that use it). */
  egressProxy?: EgressProxyTarget | null;
}

/**
 * Added to the request timeout for the age below which an unrecorded object is never swept: a
 * create's read-back after an ambiguous outcome may take this long (launch/create.ts) before the
 * launch records the object.
 */
const RECONCILE_WINDOW_MS = 30_000;

export class KubernetesExecutor implements Executor {
  /**
   * A volume that may start empty, cloned inside the Pod (its file system and network, not this
   * host's), and a Pod that is replaced on the same volume when it goes.
   */
  static readonly capabilities: Executor['capabilities'] = {
    repositoryOptional: true,
    clonesOnControllerHost: false,
    metadataKeyPrefix: 'kubernetes_',
    removes: "the session's Pod and its PVC (the workspace volume, with every file in it)",
    replacement: { stage: REPLACEMENT_STAGE, machine: 'Pod', note: 'a new Pod runs on the same volume' },
  };
  readonly capabilities = KubernetesExecutor.capabilities;
  readonly name: string;
  readonly #opts: KubernetesExecutorOptions;
  readonly #log: Logger;
  readonly #artifacts: AgentctlArtifacts;
  readonly #probes = new Map<string, ProbeResult>();
  readonly #locks = new KeyedLock();
  #kube: KubePorts | null = null;
  readonly #watches: PodWatches;
  /** Kubernetes Events about the sessions' objects (best effort; one warning when they cannot be written). */
  readonly #events: EventRecorder;
  #sweeps: SweepSchedule | null = null;
  #pools: WarmPools | null = null;
  /** Foreign objects already logged by a sweep (each once). */
  readonly #reported = new Set<string>();

  constructor(opts: KubernetesExecutorOptions) {
    this.name = opts.name;
    this.#opts = opts;
    this.#log = opts.logger ?? silentLogger;
    this.#artifacts = new AgentctlArtifacts(opts.artifacts);
    this.#events = new EventRecorder(() => this.kube.events, { log: this.#log });
    this.#watches = new PodWatches(() => this.kube.objects, `${LABEL.managedBy}=${LABEL_VALUE.managedBy},${LABEL.executor}=${opts.name}`, this.#log);
  }

  /** The cluster, reached through a client built on first use from the current connection settings. */
  get kube(): KubePorts {
    this.#kube ??= this.#opts.kube ?? kubePorts(createKubeClient(this.#opts.connection, { ...(this.#opts.env ? { env: this.#opts.env } : {}) }));
    return this.#kube;
  }

  createInstance(req: CreateInstanceRequest): Promise<ExecutorInstance> {
    return this.#locks.run(req.identity.instanceId, async () => {
      const profile = this.#profile(req);
      const previous = req.previous;
      if (previous === undefined) return this.#sweepOnUnresolved(this.#fresh(req, profile));
      const { meta } = this.#recorded(previous.metadata, req.identity.instanceId);
      return this.#sweepOnUnresolved(this.#userLaunch(() => reviveLaunch(this.#state(req, profile, meta), { secrets: previous.secrets, explainReplacement: false })));
    });
  }

  refreshInstance(instance: ExecutorInstance, req: RefreshRequest): Promise<ExecutorInstance> {
    return this.#locks.run(instance.identity.instanceId, async () => {
      await instance.close();
      const full: CreateInstanceRequest = { ...req, identity: instance.identity, repository: {}, previous: { metadata: instance.metadata, secrets: instance.secrets } };
      const { meta } = this.#recorded(instance.metadata, instance.identity.instanceId);
      return this.#sweepOnUnresolved(
        reviveLaunch(this.#state(full, this.#profile(full), meta), { secrets: instance.secrets, explainReplacement: true, ...(req.cause ? { cause: req.cause } : {}) }),
      );
    });
  }

  stopInstance(target: StopTarget, opts: StopOptions): Promise<StopResult | void> {
    return this.#locks.run(target.identity.instanceId, () => stopKubernetesInstance(this.kube, target, opts, this.#log));
  }

  async status(target: StopTarget): Promise<InstanceStatus> {
    const { meta } = recordedMetadata(target.metadata);
    let pod;
    try {
      pod = await this.kube.objects.getPod(meta.namespace, meta.podName, AbortSignal.timeout(5000));
    } catch (err) {
      return { liveness: 'unreachable', detail: `cannot read Pod ${meta.namespace}/${meta.podName}: ${errorMessage(err)}` };
    }
    const where = `Pod ${meta.namespace}/${meta.podName}`;
    if (pod === undefined) return { liveness: meta.workspaceMode === 'empty_dir' ? 'missing' : 'stopped', detail: `${where} does not exist` };
    if (pod.metadata?.uid !== meta.podUid) return { liveness: 'missing', detail: `${where} was replaced by another object (UID ${pod.metadata?.uid ?? '?'})` };
    const phase = pod.status?.phase ?? 'Unknown';
    if (pod.metadata?.deletionTimestamp || phase === 'Failed' || phase === 'Succeeded') return { liveness: 'stopped', detail: `${where} is ${pod.metadata?.deletionTimestamp ? 'being deleted' : phase}` };
    const restarts = pod.status?.containerStatuses?.find((c) => c.name === meta.mainContainer)?.restartCount ?? 0;
    if (meta.restartCount !== null && restarts > meta.restartCount) {
      // agentctl is the main container's process: a restart since Berth connected took it (and the agent) down
      return { liveness: 'stopped', detail: `${where}: its main container restarted (${restarts} restarts, ${meta.restartCount} when Berth connected), and agentctl with it` };
    }
    return { liveness: 'running', detail: `${where} is ${phase} on ${pod.spec?.nodeName ?? 'no node yet'}` };
  }

  /** One label-selected Pod watch per namespace serves every watched session (spec §7.3). */
  watchInstance(target: StopTarget, onTrouble: (reason: string, message: string) => void): () => void {
    const { meta } = recordedMetadata(target.metadata);
    if (meta.podUid === null) return () => undefined;
    return this.#watches.watch(meta.namespace, { podName: meta.podName, podUid: meta.podUid, mainContainer: meta.mainContainer, restartCount: meta.restartCount }, (t) =>
      onTrouble(t.reason, t.message),
    );
  }

  /**
   * One sweep of the objects this installation created in the executor's namespace that no session
   * records (sweep.ts). `minAgeMs`: younger objects are left alone; default the request timeout
   * plus the read-back window of an ambiguous create.
   */
  sweepUnrecorded(isRecorded: (owner: SweepOwner) => boolean | Promise<boolean>, opts: { minAgeMs?: number; signal?: AbortSignal } = {}): Promise<SweepReport> {
    return sweepUnrecorded(this.kube.objects, {
      namespace: this.#opts.connection.namespace,
      installationId: this.#opts.installationId ?? '',
      policies: this.kube.policies,
      isRecorded,
      minAgeMs: opts.minAgeMs ?? this.#minAgeMs(),
      signal: opts.signal ?? AbortSignal.timeout(SWEEP_TIMEOUT_MS),
      log: this.#log,
      reported: this.#reported,
      events: this.#events,
    });
  }

  /** Sweeps at once, every 5 minutes, and after a launch whose ambiguous create stayed unresolved (sweep-schedule.ts). */
  startSweeps(isRecorded: (owner: SweepOwner) => boolean | Promise<boolean>): () => Promise<void> {
    if ((this.#opts.installationId ?? '') === '' || this.#sweeps !== null) return () => Promise.resolve();
    const schedule = new SweepSchedule((signal) => this.sweepUnrecorded(isRecorded, { signal }), this.#log);
    this.#sweeps = schedule;
    schedule.start();
    return () => schedule.stop();
  }

  /** Keeps the warm pools of `targets` (pool/pool.ts), replacing those started before. */
  startPools(targets: readonly PoolTarget[], store: PoolStore): () => Promise<void> {
    const previous = this.#pools;
    const pools = new WarmPools(this.#launchEnv(), store, this.#opts.connection.namespace, targets);
    this.#pools = pools;
    void previous?.stop();
    pools.start();
    return async () => {
      if (this.#pools === pools) this.#pools = null;
      await pools.stop();
    };
  }

  /** Deletes the ready members of `profile`'s pool now (pool/pool.ts); 0 when no pool runs here. */
  removePoolMembers(profile: string): Promise<number> {
    return this.#pools?.removeReady(profile) ?? Promise.resolve(0);
  }

  async close(): Promise<void> {
    await this.#pools?.stop();
    this.#watches.close();
    await this.#sweeps?.stop();
  }

  #minAgeMs(): number {
    return this.#opts.connection.requestTimeoutSeconds * 1000 + RECONCILE_WINDOW_MS;
  }

  /** A create that may still commit after the launch gave up on it: sweep once it would be old enough. */
  async #sweepOnUnresolved<T>(launch: Promise<T>): Promise<T> {
    try {
      return await launch;
    } catch (err) {
      if (isLaunchError(err) && UNRESOLVED_CREATE_REASONS.has(err.reason)) this.#sweeps?.after(this.#minAgeMs());
      throw err;
    }
  }

  /** A fresh launch: a warm pool member when the profile has a pool with one ready, else cold (saying why). */
  async #fresh(req: CreateInstanceRequest, profile: KubernetesProfile): Promise<ExecutorInstance> {
    const meta = this.#freshMeta(req, profile);
    const l = this.#state(req, profile, meta);
    const pool = this.#pools?.context(req.profile.profile);
    if (pool === undefined) return this.#userLaunch(() => freshLaunch(l));
    return this.#userLaunch(() => this.#pooled(pool, l, meta));
  }

  /**
   * A launch someone waits for (a fresh one, pooled or not, or a resume): the warm pools make no
   * member meanwhile, so their refill never competes with it for the node.
   */
  #userLaunch<T>(launch: () => Promise<T>): Promise<T> {
    return this.#pools === null ? launch() : this.#pools.launching(launch);
  }

  /** A launch of a pooled profile: the claim, else (a miss) a cold launch that says why. */
  async #pooled(pool: PoolContext, l: KubeLaunchState, meta: KubernetesMetadata): Promise<ExecutorInstance> {
    const { req } = l;
    if (pool.repository !== null && req.repository.url !== pool.repository.url) {
      const asked = req.repository.url ?? (req.repository.path !== undefined ? 'a local path' : 'no repository');
      reportPoolOutcome(l, 'cold', `the pool of profile ${pool.profileName} keeps clones of ${pool.repository.url}, and this launch asks for ${asked}`);
      return freshLaunch(l);
    }
    let claimed: Awaited<ReturnType<typeof claimLaunch>>;
    try {
      claimed = await claimLaunch(pool, l);
    } catch (err) {
      // a failure the session's own (its repository's): what it holds of the member goes, as a cold launch's would
      await l.recordFailure(err, 'Berth deletes the pool member this launch claimed.');
      throw await rollback(l, err);
    }
    if (!('miss' in claimed)) {
      reportPoolOutcome(l, 'warm', `a ready Pod of profile ${pool.profileName}'s pool was claimed (${l.meta.podName})`);
      return claimed;
    }
    const cold = this.#state(req, l.profile, { ...meta });
    reportPoolOutcome(cold, 'cold', claimed.miss);
    return freshLaunch(cold);
  }

  #launchEnv(): KubeLaunchEnv {
    return { executorName: this.name, connection: this.#opts.connection, kube: this.kube, fetch: this.#opts.fetch ?? httpFetch, artifacts: this.#artifacts, probes: this.#probes, log: this.#log, random: defaultRandom, installationId: this.#opts.installationId ?? null, events: this.#events, egressProxy: this.#opts.egressProxy ?? null };
  }

  #state(req: CreateInstanceRequest, profile: KubernetesProfile, meta: KubernetesMetadata): KubeLaunchState {
    return new KubeLaunchState(this.#launchEnv(), req, profile, identityOf(meta), meta);
  }

  #profile(req: Pick<CreateInstanceRequest, 'profile'>): KubernetesProfile {
    const snapshot = req.profile.settings[PROFILE_SETTING];
    if (snapshot === undefined) throw new LaunchError(INIT_STAGE, 'ProfileMissing', `the session records no Kubernetes profile (launch it with a profile of executor '${this.name}')`);
    try {
      return decodeProfileSnapshot(snapshot);
    } catch (err) {
      throw new LaunchError(INIT_STAGE, 'ProfileInvalid', `the session's recorded Kubernetes profile cannot be read: ${errorMessage(err)}`, { cause: err });
    }
  }

  #freshMeta(req: CreateInstanceRequest, profile: KubernetesProfile): KubernetesMetadata {
    const identity: ResourceIdentity = {
      instanceId: req.identity.instanceId,
      sessionId: req.identity.sessionId,
      executor: this.name,
      profile: req.profile.profile ?? this.name,
    };
    try {
      validateIdentity(identity);
    } catch (err) {
      throw new LaunchError(INIT_STAGE, 'InvalidIdentity', errorMessage(err), { cause: err });
    }
    return initialMetadata(identity, this.#opts.connection.namespace, profile);
  }

  #recorded(metadata: Readonly<Record<string, string>>, instanceId: string): { meta: KubernetesMetadata } {
    let meta: KubernetesMetadata;
    try {
      meta = recordedMetadata(metadata).meta;
    } catch (err) {
      throw new LaunchError(INIT_STAGE, 'InventoryInvalid', errorMessage(err), { cause: err });
    }
    if (meta.instanceId !== instanceId) throw new LaunchError(INIT_STAGE, REASON.instanceMismatch, `recorded instance ${meta.instanceId} is not ${instanceId}`);
    return { meta };
  }
}
