/**
 * Watches a launching Pod (and its claim, and both objects' Events) from creation until agentctl
 * answers: every Kubernetes signal becomes a `waiting` stage event with a short reason within a
 * moment of the cluster knowing it; a terminal state (image pull error, crash-looping init
 * container, Pod failed or deleted or replaced) fails the launch at once; each wait phase — PVC
 * binding, scheduling, image pull, container start — runs under its own budget. A watch that
 * relists, never a poll loop.
 * @module
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { errorMessage } from '../../../shared/errors.js';
import { LaunchError } from '../../launch-kit/index.js';
import { STAGE } from '../constants.js';
import { assessPod, assessPvc, describeEvent, type PodAssessment } from '../compose/index.js';
import type { WaitBudgets } from '../types.js';
import type { KubeLaunchState } from './context.js';
import { gatedWait } from './gate.js';

type Phase = 'binding' | 'scheduling' | 'pulling' | 'starting';

const PHASE_BUDGET: Record<Phase, keyof WaitBudgets> = {
  binding: 'pvcBindingSeconds',
  scheduling: 'schedulingSeconds',
  pulling: 'imagePullSeconds',
  starting: 'containerStartSeconds',
};

const PHASE_WORDS: Record<Phase, string> = {
  binding: 'the workspace volume to bind',
  scheduling: 'the Pod to be scheduled',
  pulling: 'the image and volumes',
  starting: 'the main container to start',
};

export class PodMonitor {
  /** Rejects (never resolves) with the LaunchError that ends the launch. */
  readonly failure: Promise<never>;
  /** The latest Pod seen by the watch. */
  pod: V1Pod | null = null;
  assessment: PodAssessment | null = null;
  /** Which stage reasons are reported under (the monitor outlives `pod_ready`). */
  stage: string = STAGE.podReady;
  readonly #l: KubeLaunchState;
  readonly #uid: string;
  readonly #abort = new AbortController();
  #fail!: (err: LaunchError) => void;
  #pvcBound: boolean;
  #phase: Phase | null = null;
  #phaseTimer: NodeJS.Timeout | null = null;
  #lastReported = '';
  #restarts: number | null = null;
  readonly #changed = new Set<() => void>();
  #budgetsOn = true;

  constructor(l: KubeLaunchState, created: V1Pod) {
    this.#l = l;
    this.#uid = created.metadata?.uid ?? '';
    this.pod = created;
    this.#pvcBound = l.pvc === null || l.pvc.status?.phase === 'Bound';
    this.failure = new Promise<never>((_, reject) => {
      this.#fail = reject;
    });
    this.failure.catch(() => undefined);
    const signal = this.#abort.signal;
    const name = created.metadata?.name ?? '';
    const watchFailed = (what: string) => (err: unknown) => {
      if (!signal.aborted) this.#end(new LaunchError(this.stage, 'WatchFailed', `watching the ${what} failed: ${errorMessage(err)}`, { cause: err }));
    };
    void l.kube.objects.watchPod(l.namespace, name, (e) => this.#onPod(e.type, e.object), signal).catch(watchFailed('Pod'));
    void l.kube.objects.watchEvents(l.namespace, this.#uid, (ev) => this.#onEvent(ev), signal).catch(watchFailed('Pod events'));
    if (l.pvc !== null && !this.#pvcBound) {
      const pvc = l.pvc;
      void l.kube.objects.watchPvc(l.namespace, pvc.metadata?.name ?? '', (e) => this.#onPvc(e.type, e.object), signal).catch(watchFailed('PVC'));
      void l.kube.objects.watchEvents(l.namespace, pvc.metadata?.uid ?? '', (ev) => this.#onEvent(ev), signal).catch(watchFailed('PVC events'));
    }
    this.#assess(created);
  }

  /** True once the Pod is bound to a node (execs may start to succeed). */
  get scheduled(): boolean {
    return Boolean(this.pod?.spec?.nodeName);
  }

  /** True once the Pod's status (this Pod's, by UID) shows `container` running. */
  containerRunning(container: string): boolean {
    return this.pod?.status?.containerStatuses?.find((c) => c.name === container)?.state?.running !== undefined;
  }

  /** The main container's restart count as last seen. */
  get restartCount(): number {
    return this.#restarts ?? 0;
  }

  /** Resolves at the next Pod update or Event of the Pod or its PVC (or after `ms`). */
  nextChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#changed.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#changed.add(done);
    });
  }

  /** Stops the wait budgets (bootstrap and connect have their own deadlines) but keeps failing fast. */
  endBudgets(): void {
    this.#budgetsOn = false;
    this.#clearTimer();
  }

  close(): void {
    this.#clearTimer();
    this.#abort.abort();
    for (const f of [...this.#changed]) f();
  }

  /** The latest reason in words, for timeout and failure messages. */
  describeLatest(): string {
    return this.assessment ? `${this.assessment.reason}: ${this.assessment.message}` : 'no status reported yet';
  }

  #onPod(type: string, pod: V1Pod | undefined): void {
    if (this.#abort.signal.aborted) return;
    if (type === 'DELETED' || pod === undefined) {
      this.#end(new LaunchError(this.stage, 'PodDeleted', `the Pod was deleted before agentctl started (latest: ${this.describeLatest()})`));
      return;
    }
    if (pod.metadata?.uid !== this.#uid) {
      this.#end(new LaunchError(this.stage, 'PodReplaced', `the Pod was replaced by another object of the same name (UID ${pod.metadata?.uid ?? '?'}); it is left alone`));
      return;
    }
    this.pod = pod;
    this.#assess(pod);
    for (const f of [...this.#changed]) f();
  }

  #assess(pod: V1Pod): void {
    const base = assessPod(pod, this.#l.profile.mainContainer);
    const gated = base.kind === 'waiting' && base.phase === 'scheduling' ? gatedWait(pod) : null;
    const a = gated === null ? base : { ...base, ...gated };
    const before = this.describeLatest();
    this.assessment = a;
    const restarts = pod.status?.containerStatuses?.find((s) => s.name === this.#l.profile.mainContainer)?.restartCount ?? 0;
    const restarted = this.#restarts !== null && restarts > this.#restarts;
    this.#restarts = restarts;
    if (a.kind === 'terminal') {
      // a deletion says nothing about why the Pod was not up yet: keep the reason it was waiting for
      this.#end(new LaunchError(this.stage, a.reason, a.reason === 'PodDeleted' ? `${a.message} (latest: ${before})` : a.message));
      return;
    }
    if (restarted) this.#reportOnce('ContainerRestarted', `the main container restarted (${restarts} restarts): ${a.message}`);
    else if (a.kind === 'waiting') this.#reportOnce(a.reason, a.message);
    this.#enterPhase(a.kind === 'ready' ? 'starting' : !this.#pvcBound && a.phase === 'scheduling' ? 'binding' : a.phase === 'running' ? 'starting' : a.phase);
  }

  #onPvc(type: string, pvc: V1PersistentVolumeClaim | undefined): void {
    if (this.#abort.signal.aborted) return;
    if (type === 'DELETED' || pvc === undefined) {
      this.#end(new LaunchError(this.stage, 'ClaimDeleted', 'the workspace PVC was deleted while the Pod was starting'));
      return;
    }
    const a = assessPvc(pvc);
    if (a.kind === 'terminal') {
      this.#end(new LaunchError(this.stage, a.reason, `workspace PVC: ${a.message}`));
      return;
    }
    if (a.kind === 'ready' && !this.#pvcBound) {
      this.#pvcBound = true;
      this.#reportOnce('ClaimBound', `workspace PVC ${a.message}`);
      if (this.pod) this.#assess(this.pod);
    } else if (a.kind === 'waiting') {
      this.#reportOnce(`Claim${a.reason}`, `workspace PVC: ${a.message}`);
    }
  }

  #onEvent(event: Parameters<typeof describeEvent>[0]): void {
    if (this.#abort.signal.aborted) return;
    const d = describeEvent(event);
    if (d === null) return;
    // Once the Pod is up, an Event (a kubelet warning repeated every few seconds, such as
    // MissingClusterDNS) says nothing about what the later stages wait on: they report their own.
    if (this.#budgetsOn) this.#reportOnce(d.reason, `${d.object}: ${d.message}`);
    // The kubelet's `Started` event comes as soon as the container runs, up to a second before the
    // status says so: a waiting exec attempt goes at once instead of at the end of its back-off.
    for (const f of [...this.#changed]) f();
  }

  #reportOnce(reason: string, message: string): void {
    const key = `${reason}\n${message}`;
    if (key === this.#lastReported) return;
    this.#lastReported = key;
    this.#l.report({ stage: this.stage, status: 'waiting', reason, message });
  }

  #enterPhase(phase: Phase): void {
    if (phase === this.#phase || !this.#budgetsOn) return;
    this.#phase = phase;
    this.#clearTimer();
    const seconds = this.#l.profile.budgets[PHASE_BUDGET[phase]];
    this.#phaseTimer = setTimeout(() => {
      this.#end(
        new LaunchError(
          this.stage,
          'TimedOut',
          `waited ${seconds} s for ${PHASE_WORDS[phase]} (profiles.${this.#l.identity.profile}.kubernetes.timeouts.${PHASE_BUDGET[phase].replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}); latest: ${this.describeLatest()}`,
        ),
      );
    }, seconds * 1000);
    this.#phaseTimer.unref();
  }

  #clearTimer(): void {
    if (this.#phaseTimer !== null) clearTimeout(this.#phaseTimer);
    this.#phaseTimer = null;
  }

  #end(err: LaunchError): void {
    if (this.#abort.signal.aborted) return;
    this.#fail(err);
    this.close();
  }
}
