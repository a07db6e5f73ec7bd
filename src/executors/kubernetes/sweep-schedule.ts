/**
 * When the sweep of unrecorded objects runs: once at start (after the controller's recovery),
 * every {@link SWEEP_INTERVAL_MS}, when an unrecorded object of ours becomes old enough to delete,
 * and after a launch whose ambiguous create could not be resolved. One sweep at a time; a request
 * while one runs makes it run once more. Timers never keep the process alive.
 * @module
 */
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { SweepReport } from './sweep.js';

const SWEEP_INTERVAL_MS = 5 * 60_000;
/** Added to a waiting object's remaining age, so the next sweep finds it old enough. */
const MARGIN_MS = 2_000;
/** Bounds one whole sweep (its lists, deletes and their waits). */
export const SWEEP_TIMEOUT_MS = 3 * 60_000;

/**
 * The reasons `createOwned` (launch/create.ts) gives when an ambiguous create could not be resolved:
 * the read-back failed, or found nothing while the create may still commit.
 */
export const UNRESOLVED_CREATE_REASONS: ReadonlySet<string> = new Set(['ReconcileFailed', 'ApiServerRefused']);

export class SweepSchedule {
  readonly #run: (signal: AbortSignal) => Promise<SweepReport>;
  readonly #log: Logger;
  readonly #stop = new AbortController();
  #running: Promise<void> | null = null;
  #again = false;
  #periodic: NodeJS.Timeout | null = null;
  /** Due times of the extra sweeps asked for, and their timers. */
  readonly #extra = new Set<NodeJS.Timeout>();

  constructor(run: (signal: AbortSignal) => Promise<SweepReport>, log: Logger, readonly intervalMs = SWEEP_INTERVAL_MS) {
    this.#run = run;
    this.#log = log;
  }

  start(): void {
    this.#periodic = setInterval(() => this.now(), this.intervalMs);
    this.#periodic.unref();
    this.now();
  }

  /** A sweep in `delayMs` (in addition to the periodic ones). */
  after(delayMs: number): void {
    if (this.#stop.signal.aborted) return;
    const t = setTimeout(() => {
      this.#extra.delete(t);
      this.now();
    }, Math.max(0, delayMs) + MARGIN_MS);
    t.unref();
    this.#extra.add(t);
  }

  /** A sweep now (or right after the one running). */
  now(): void {
    if (this.#stop.signal.aborted) return;
    if (this.#running !== null) {
      this.#again = true;
      return;
    }
    this.#running = this.#loop().finally(() => {
      this.#running = null;
    });
  }

  async #loop(): Promise<void> {
    do {
      this.#again = false;
      // a timer of our own: on Node 20 AbortSignal.any holds an AbortSignal.timeout source weakly,
      // and a collected one never fires
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(new Error(`the sweep took longer than ${SWEEP_TIMEOUT_MS} ms`)), SWEEP_TIMEOUT_MS);
      timer.unref();
      const signal = AbortSignal.any([this.#stop.signal, deadline.signal]);
      try {
        const report = await this.#run(signal);
        if (report.errors.length > 0) this.#log.warn({ errors: report.errors }, 'the sweep of unrecorded objects failed in part (the next sweep tries again)');
        if (report.nextInMs !== null && report.nextInMs < this.intervalMs) this.after(report.nextInMs);
      } catch (err) {
        this.#log.warn({ err: errorMessage(err) }, 'the sweep of unrecorded objects failed (the next sweep tries again)');
      } finally {
        clearTimeout(timer);
      }
    } while (this.#again && !this.#stop.signal.aborted);
  }

  /** Stops the timers and cancels a sweep in flight; resolves once it has ended. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error('the executor is closing'));
    if (this.#periodic !== null) clearInterval(this.#periodic);
    for (const t of this.#extra) clearTimeout(t);
    this.#extra.clear();
    await this.#running;
  }
}
