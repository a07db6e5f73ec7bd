/**
 * Whether `berth serve` takes requests, as `/readyz` tells a load balancer or Kubernetes (pure).
 * The server is alive (`/healthz`) as soon as it listens; it is ready once the controller's store
 * is open and the sessions recorded before the start are recovered. The state is a seam other
 * parts flip: `serve.ts` marks it ready after start-up and `stopping` on shutdown, and a standby
 * replica (leader election) will mark itself `standby` so the Service sends nobody to it.
 * @module
 */

/** Why the server is not ready: starting up, a standby replica, or shutting down. */
type NotReadyReason = 'starting' | 'standby' | 'stopping';

type ReadinessState = { readonly ready: true } | { readonly ready: false; readonly reason: NotReadyReason; readonly message: string };

/** What `/readyz` answers: 200 with the first body, 503 with the second. */
type ReadinessBody = { status: 'ready' } | { status: 'not_ready'; reason: NotReadyReason; message: string };

const DEFAULT_MESSAGES: Record<NotReadyReason, string> = {
  starting: 'starting: opening the store and recovering the recorded sessions',
  standby: 'a standby: another controller is active',
  stopping: 'shutting down',
};

export class Readiness {
  #state: ReadinessState;
  readonly #listeners = new Set<(state: ReadinessState) => void>();

  /** @param initial @default not ready, `starting` */
  constructor(initial: ReadinessState = { ready: false, reason: 'starting', message: DEFAULT_MESSAGES.starting }) {
    this.#state = initial;
  }

  get state(): ReadinessState {
    return this.#state;
  }

  get ready(): boolean {
    return this.#state.ready;
  }

  markReady(): void {
    this.#set({ ready: true });
  }

  /** Not ready, for `reason` (the message defaults to one naming it; it is shown to anyone: no secrets). */
  markNotReady(reason: NotReadyReason, message: string = DEFAULT_MESSAGES[reason]): void {
    this.#set({ ready: false, reason, message });
  }

  /** Called on every change (the metrics' readiness gauge). Returns an unsubscribe function. */
  onChange(listener: (state: ReadinessState) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  #set(state: ReadinessState): void {
    this.#state = state;
    for (const listener of [...this.#listeners]) listener(state);
  }
}

/**
 * The status and body of `/readyz` for `state`. `standbyOk`: a standby counts as ready too (its
 * body still says `standby`): a Pod's readiness for a Deployment's rollout, not for traffic.
 */
export function readinessResponse(state: ReadinessState, opts: { standbyOk?: boolean } = {}): { status: 200 | 503; body: ReadinessBody } {
  if (state.ready) return { status: 200, body: { status: 'ready' } };
  if (opts.standbyOk === true && state.reason === 'standby') return { status: 200, body: { status: 'not_ready', reason: state.reason, message: state.message } };
  return { status: 503, body: { status: 'not_ready', reason: state.reason, message: state.message } };
}
