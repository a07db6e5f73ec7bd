/**
 * The one rollback of a failed launch: cleanup steps in order under ONE deadline of their own
 * (independent of the launch's signal, which may be what failed it; spec §4.9), their errors
 * collected, then attached to the launch's failure.
 * @module
 */
import { attachRollbackErrors } from './launch-error.js';

/**
 * How long a rollback may take, by default. One setting for every rollback: the longest one is the
 * controller's after connect, which runs the executor's whole stop (Kubernetes: up to 20 s for the
 * agent, 60 s for the cleanup script, then the Pod's termination and the PVC's deletion), so that
 * is what it must fit. A deadline only bounds a stuck rollback; one that works ends long before.
 * Tests pass a short `timeoutMs`.
 */
export const ROLLBACK_TIMEOUT_MS = 120_000;

interface RollbackOptions {
  /** @default ROLLBACK_TIMEOUT_MS */
  timeoutMs?: number;
}

/**
 * Undoes what one launch created. Each {@link step} runs only while every earlier one succeeded
 * (what a failed step leaves must stay recorded, so nothing after it may release its record) and
 * before the deadline; a step still running at the deadline is abandoned and counts as failed.
 * The deadline starts when the rollback is created.
 */
export class Rollback {
  readonly timeoutMs: number;
  /** The deadline, for steps that take a signal (deletions and their waits). */
  readonly signal: AbortSignal;
  readonly #errors: unknown[] = [];

  constructor(opts: RollbackOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? ROLLBACK_TIMEOUT_MS;
    this.signal = AbortSignal.timeout(this.timeoutMs);
  }

  /** The errors so far (a copy). */
  get errors(): unknown[] {
    return [...this.#errors];
  }

  /** True while no step has failed. */
  get clean(): boolean {
    return this.#errors.length === 0;
  }

  /** Records errors a step collected itself (e.g. one per object it deleted). */
  record(...errors: unknown[]): void {
    this.#errors.push(...errors);
  }

  /** Runs one cleanup step, named `what` in the error when the deadline cuts it off; skipped after a failure. */
  async step(what: string, fn: () => Promise<unknown>): Promise<void> {
    if (!this.clean) return;
    if (this.signal.aborted) {
      this.#errors.push(new Error(`rollback: ${what} not done: the rollback deadline of ${this.timeoutMs} ms passed`));
      return;
    }
    let onAbort: (() => void) | undefined;
    const expired = new Promise<never>((_, reject) => {
      onAbort = () => reject(new Error(`rollback: ${what} did not finish within the rollback deadline of ${this.timeoutMs} ms`));
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([fn(), expired]);
    } catch (e) {
      this.#errors.push(e);
    } finally {
      if (onAbort) this.signal.removeEventListener('abort', onAbort);
    }
  }

  /** The launch's `failure` with this rollback's errors attached (see {@link attachRollbackErrors}). */
  finish(failure: unknown): Error {
    return attachRollbackErrors(failure, this.errors);
  }
}
