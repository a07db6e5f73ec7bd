/**
 * The controller inside one `berth serve`: started once (at once, or when this replica takes the
 * Lease), announced to the API when it serves, and stopped once (waiting for a start still on its
 * way). Its store calls are timed into the metrics; the session metrics follow its events.
 * @module
 */
import type { ServerMetrics } from './metrics.js';
import { observeSessions } from './metrics-observer.js';
import type { ApiLogger, ApiService } from './server.js';

/** What serve hands the code that creates the controller. */
export interface ServiceContext {
  /** The leader's claim on the store (leader election only): the store refuses writes once a newer one is claimed. */
  fence?: { holder: string; generation: number };
  /** Times one store call (the store latency histogram). */
  observeStore: (op: string, seconds: number, ok: boolean, backend: string) => void;
}

interface ControllerRunOptions {
  createService: (ctx: ServiceContext) => Promise<ApiService>;
  /** Hands the service to the API routes (once). */
  started: (service: Promise<ApiService>) => void;
  metrics: ServerMetrics;
  /** The controller serves: serve records its port and marks itself ready. */
  onReady: () => void;
  logger?: ApiLogger;
}

export class ControllerRun {
  readonly #opts: ControllerRunOptions;
  #starting: Promise<ApiService> | undefined;
  #stopping: Promise<void> | undefined;
  #observer: { close(): void } | undefined;

  constructor(opts: ControllerRunOptions) {
    this.#opts = opts;
  }

  /** Creates the controller (once) and waits until it serves; throws what creating it threw. */
  async start(fence: ServiceContext['fence']): Promise<void> {
    if (this.#starting !== undefined || this.#stopping !== undefined) throw new Error('the controller was started already');
    const { metrics, logger } = this.#opts;
    const ctx: ServiceContext = { observeStore: (op, seconds, ok, backend) => metrics.observeStore(backend, op, ok, seconds), ...(fence ? { fence } : {}) };
    const starting = this.#opts.createService(ctx);
    this.#starting = starting;
    this.#opts.started(starting);
    const svc = await starting;
    if (this.#stopping !== undefined) return;
    this.#observer = observeSessions(svc, metrics, (err) => logger?.warn({ err }, 'metrics: cannot read the sessions'));
    this.#opts.onReady();
  }

  /** Stops the controller (idempotent; a start on its way is awaited first, a failed one is nothing to stop). */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      const svc = await this.#starting?.catch(() => undefined);
      this.#observer?.close();
      await svc?.close();
    })();
    return this.#stopping;
  }
}
