/**
 * A new Pod brought to a connected agentctl, one method per stage — `pod_ready`, `bootstrap`
 * (pod-bootstrap.ts), `agentctl_connect` — for a fresh launch and for a replacement Pod (a resume
 * after stop), which run them as stages in this order. The Pod monitor runs throughout, so a
 * failure in the Pod ends whichever stage is running; each checkpoint is written inside the stage
 * of its side effect. The connect starts the moment the bootstrap exec says it wrote the start
 * marker, so the forward, the handshake and the instance create overlap prepare.sh (the clone): it
 * needs nothing of the workspace but that its mount exists, and the agent starts only after.
 * After a failure {@link PodStart.abandon} closes the monitor and any forward; deleting the Pod is
 * the caller's rollback. On a new managed claim, stage `storage` creates the Pod behind a scheduling
 * gate while the claim binds (through `l.createGatedPod`, which this sets); `pod_ready` lifts it.
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { CHECKPOINT, STAGE } from '../constants.js';
import type { AgentctlDelivery } from '../artifacts.js';
import { awaitHealthy, connectFresh, type Connected } from './connect.js';
import type { KubeLaunchState } from './context.js';
import { liftGate } from './gate.js';
import { instanceEnv } from './instance.js';
import type { PodMonitor } from './monitor.js';
import { PodBootstrap } from './pod-bootstrap.js';
import { createPod } from './pod-ready.js';
import { awaitPolicyEnforced } from './network-policy.js';

/** How long agentctl may take to answer once the workspace is prepared. */
const CONNECT_TIMEOUT_MS = 60_000;

interface PodStartOptions {
  /** The Pod's name: the instance's, or the recorded one for a replacement. */
  name: string;
  /** The bootstrap nonce this Pod's agentctl trades for its token. */
  nonce: string;
  /** A fresh workspace clones; a replacement on a retained volume keeps what is there. */
  clone: boolean;
  /**
   * A warm pool member: agentctl is started and its health awaited ({@link PodStart.healthy}), but
   * no nonce is traded and no instance created (the claim does that, for its session).
   */
  healthOnly?: boolean;
}

/** The stages of one new Pod, run by the caller in order: {@link ready}, {@link bootstrap}, {@link connect}. */
export class PodStart {
  readonly #l: KubeLaunchState;
  readonly #opts: PodStartOptions;
  /** Cuts a connect still running short (a failure, or a step that ignores the abort). */
  readonly #cancel = new AbortController();
  readonly #markerSeen: Promise<void>;
  #markerWritten!: () => void;
  #boot: PodBootstrap | null = null;
  #monitor: PodMonitor | null = null;
  #delivery: AgentctlDelivery | null = null;
  #connecting: Promise<Connected> | null = null;
  /** The check that the session's NetworkPolicy is enforced (none for a pool member's health-only start). */
  #enforced: Promise<void> = Promise.resolve();
  #bootstrapped = false;
  /** The Pod created behind the scheduling gate during `storage`, or the error of that create. */
  #gated: Promise<{ pod: V1Pod } | { error: unknown }> | null = null;

  constructor(l: KubeLaunchState, opts: PodStartOptions) {
    this.#l = l;
    this.#opts = opts;
    this.#markerSeen = new Promise<void>((resolve) => (this.#markerWritten = resolve));
    l.createGatedPod = () => this.#createGated();
  }

  /** argv that runs agentctl in the Pod (after {@link bootstrap}). */
  get agentctlCommand(): readonly string[] {
    return this.#delivery?.command ?? [];
  }

  /** Stage `pod_ready`: creates the Pod (or lifts the gate of the one `storage` created) and waits until its main container takes an exec. */
  async ready(): Promise<void> {
    const created = await this.#liftedPod();
    this.#boot = new PodBootstrap(this.#l, { ...this.#opts, onAgentctlStarting: () => this.#markerWritten(), ...(created !== null ? { created } : {}) });
    this.#monitor = await this.#boot.ready();
  }

  /** Stage `bootstrap`: the upload and prepare.sh; the connect starts once the start marker is written. */
  async bootstrap(): Promise<void> {
    const m = this.#startedMonitor();
    if (this.#opts.healthOnly !== true) {
      this.#connecting = this.#markerSeen.then(() => this.#connect(m));
      this.#connecting.catch(() => undefined); // awaited by connect(); until then a failure must not go unhandled
      // alongside the upload: the proof that the session's NetworkPolicy holds (network-policy.ts)
      this.#enforced = awaitPolicyEnforced(this.#l);
      this.#enforced.catch(() => undefined);
    }
    this.#delivery = await (this.#boot as PodBootstrap).run(m);
    this.#bootstrapped = true;
  }

  /** Stage `agentctl_connect`: the connect started during the bootstrap, awaited; checkpointed. */
  async connect(): Promise<Connected> {
    const l = this.#l;
    const m = this.#startedMonitor();
    m.stage = STAGE.agentctlConnect;
    // (the marker line cannot have been missed, as the exec exits 0 after it; should it be, connect now)
    this.#markerWritten();
    this.#connecting ??= this.#connect(m);
    // the agent starts once the executor returns: only when the session's policy is seen enforced
    const [connected] = await Promise.all([Promise.race([this.#connecting, m.failure]), this.#enforced]);
    l.meta = { ...l.meta, remotePort: connected.instancePort, restartCount: m.restartCount };
    await l.checkpoint(CHECKPOINT.agentctlConnected);
    return connected;
  }

  /** A pool member's last step: agentctl answers its health through a forward (then closed); nothing is traded. */
  async healthy(): Promise<void> {
    const l = this.#l;
    const m = this.#startedMonitor();
    m.stage = STAGE.agentctlConnect;
    const target = { forward: l.kube.forward, fetch: l.env.fetch, namespace: l.namespace, pod: this.#opts.name, signal: AbortSignal.any([this.#cancel.signal, ...(l.signal ? [l.signal] : [])]) };
    await Promise.race([awaitHealthy(target, CONNECT_TIMEOUT_MS, m.failure), m.failure]);
    l.meta = { ...l.meta, restartCount: m.restartCount };
  }

  /**
   * After a failure of any stage: the bootstrap's progress stops (and a remembered probe is
   * forgotten) when it had not ended, the monitor closes, and a connect still running is cut short
   * and closes its forwards once it settles (not awaited: a step that ignores the abort must not
   * hold up the rollback, or a stop waiting for it).
   */
  abandon(): void {
    if (!this.#bootstrapped) this.#boot?.fail();
    this.close();
    this.#cancel.abort();
    void this.#connecting?.then(
      (open) => Promise.allSettled(open.forwards.map((f) => f.close())),
      () => undefined,
    );
  }

  /** Ends the monitor (the Pod is watched only while it starts). Idempotent. */
  close(): void {
    this.#monitor?.close();
  }

  /** Part of stage `storage`: the Pod created (checkpointed) behind the gate; false when that failed. Never rejects. */
  #createGated(): Promise<boolean> {
    this.#gated ??= createPod(this.#l, this.#opts.name, { gated: true }).then(
      (pod) => ({ pod }),
      (error: unknown) => ({ error }),
    );
    return this.#gated.then((r) => 'pod' in r);
  }

  /** The Pod `storage` created, its gate lifted now (or the error of its create); null when `pod_ready` creates it. */
  async #liftedPod(): Promise<V1Pod | null> {
    if (this.#gated === null) return null;
    const r = await this.#gated;
    if ('error' in r) throw r.error;
    return liftGate(this.#l, r.pod);
  }

  #startedMonitor(): PodMonitor {
    if (this.#monitor === null) throw new Error('the Pod is not ready yet');
    return this.#monitor;
  }

  #connect(m: PodMonitor): Promise<Connected> {
    const l = this.#l;
    const target = {
      forward: l.kube.forward,
      fetch: l.env.fetch,
      namespace: l.namespace,
      pod: this.#opts.name,
      instanceId: l.identity.instanceId,
      instanceEnv: instanceEnv(l.req),
      labels: { session_id: l.identity.sessionId, executor: l.identity.executor, profile: l.identity.profile },
      signal: AbortSignal.any([this.#cancel.signal, ...(l.signal ? [l.signal] : [])]),
    };
    return connectFresh(target, this.#opts.nonce, { failure: m.failure, timeoutMs: CONNECT_TIMEOUT_MS });
  }
}
