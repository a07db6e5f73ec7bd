/**
 * Leader election over one Lease, with the semantics of client-go's leaderelection: acquire the
 * Lease when it is missing, released (empty holder), ours, or expired; renew it every retryPeriod;
 * step down when renewals fail for renewDeadline, before anybody else may take it.
 *
 * Expiry is measured on OUR monotonic clock from when we first saw the current record (its
 * resourceVersion), never from the holder's renewTime: clocks of two machines need not agree.
 * Writes are optimistic (resourceVersion): two electors racing for the Lease cannot both win.
 * Every new term bumps leaseTransitions, and that number is the term's fencing generation.
 * @module
 */
import { silentLogger } from '../../shared/logger.js';
import type { Logger } from '../../shared/logger.js';
import { abortable } from '../../shared/abortable.js';
import { isLeaseConflict } from './lease-port.js';
import type { LeasePort, LeaseRecord, LeaseState } from './lease-port.js';
import { JITTER, compileElectorOptions } from './options.js';
import type { CompiledElectorOptions, LeaderElectorOptions, LeaderEvent, StopReason } from './options.js';

interface Term {
  generation: number;
  controller: AbortController;
  /** Monotonic time the last successful renewal was started: the deadline counts from there. */
  renewedAt: number;
  deadline: unknown;
}

export class LeaderElector {
  readonly #opts: CompiledElectorOptions;
  readonly #port: LeasePort;
  readonly #callbacks: LeaderElectorOptions;
  readonly #log: Logger;
  #running = false;
  #timer: unknown = undefined;
  #inflight: Promise<void> | null = null;
  #attempt: AbortController | null = null;
  #term: Term | null = null;
  #observed: LeaseState | null = null;
  #observedAt = 0;
  #maxTransitions = -1;
  #reported: string | null | undefined = undefined;

  /** @throws TypeError naming an invalid option (see compileElectorOptions). */
  constructor(options: LeaderElectorOptions) {
    this.#opts = compileElectorOptions(options);
    this.#port = options.port;
    this.#callbacks = options;
    this.#log = options.logger ?? silentLogger;
  }

  /** True while a term runs (between onStartedLeading and its signal aborting). */
  get isLeader(): boolean {
    return this.#term !== null;
  }

  /** The holder last observed in the Lease (this identity included); null when none. */
  get leader(): string | null {
    return this.#observed?.holderIdentity || null;
  }

  /** The current term's generation; null when not leading. */
  get generation(): number | null {
    return this.#term?.generation ?? null;
  }

  get identity(): string {
    return this.#opts.identity;
  }

  /** Starts competing for the Lease (at once, then every retryPeriod). Idempotent. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    // An attempt still out (stop() not awaited) carries on as this loop's first one.
    if (this.#inflight === null) this.#loop();
  }

  /**
   * Stops competing without touching the Lease (as a crash would look to the others: a standby
   * takes over once the Lease expires). A running term ends ('stopped').
   */
  async stop(): Promise<void> {
    this.#halt();
    this.#attempt?.abort(new Error('leader election stopped'));
    await this.#settled();
    await this.#stepDown('stopped');
  }

  /**
   * Graceful shutdown: stops competing, ends the term (awaiting onStoppedLeading, so the work drains
   * first), then writes an empty holder with leaseDurationSeconds 1 so a standby takes over at once.
   * True when the Lease was released; false when this elector did not hold it or the write failed.
   */
  async release(): Promise<boolean> {
    this.#halt();
    await this.#settled();
    // Not leading, but an acquisition that landed as we stopped may still have written us in.
    const observed = this.#observed;
    const generation = this.#term?.generation ?? (observed?.holderIdentity === this.#opts.identity ? observed.leaseTransitions : null);
    if (generation === null) return false;
    await this.#stepDown('released');
    const attempt = this.#newAttempt();
    try {
      const current = await abortable(this.#port.get(attempt.signal), attempt.signal);
      if (current === null || current.holderIdentity !== this.#opts.identity || current.leaseTransitions !== generation) return false;
      const now = this.#opts.clock.wallNow();
      const released = { ...current, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now };
      this.#observe(await abortable(this.#port.replace(released, attempt.signal), attempt.signal));
      this.#log.info({ lease: this.#opts.lease, generation }, 'leader election: released the lease');
      return true;
    } catch (err) {
      this.#emit({ type: 'error', op: 'release', error: err });
      return false;
    } finally {
      this.#endAttempt(attempt);
    }
  }

  #halt(): void {
    this.#running = false;
    if (this.#timer !== undefined) this.#opts.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #settled(): Promise<void> {
    while (this.#inflight !== null) await this.#inflight;
  }

  #loop(): void {
    this.#timer = undefined;
    this.#inflight = this.#tick().finally(() => {
      this.#inflight = null;
    });
  }

  #schedule(): void {
    if (!this.#running) return;
    const { retryPeriodMs, random, clock } = this.#opts;
    const delay = this.#term !== null ? retryPeriodMs : retryPeriodMs * (1 + JITTER * random());
    this.#timer = clock.setTimeout(() => this.#loop(), delay);
  }

  /** One attempt to acquire or renew, then what it means for the term. */
  async #tick(): Promise<void> {
    const term = this.#term;
    const startedAt = this.#opts.clock.now();
    const attempt = this.#newAttempt();
    let written: LeaseState | null = null;
    try {
      written = await abortable(this.#tryAcquireOrRenew(term, attempt.signal), attempt.signal);
    } catch (err) {
      if (isLeaseConflict(err)) this.#log.debug({ lease: this.#opts.lease, reason: err.reason }, 'leader election: lost a write race');
      else if (this.#running) this.#emit({ type: 'error', op: term ? 'renew' : 'acquire', error: err });
    } finally {
      this.#endAttempt(attempt);
    }
    if (!this.#running) return;
    if (term !== this.#term) {
      // The term ended while the call was out (deadline): its result belongs to no term. The next
      // attempt starts a new term (with a new generation) if the Lease is still ours.
    } else if (term !== null) {
      this.#afterRenew(term, written !== null, startedAt);
    } else if (written !== null) {
      this.#startLeading(written.leaseTransitions, startedAt);
    }
    this.#schedule();
  }

  #afterRenew(term: Term, won: boolean, startedAt: number): void {
    const now = this.#opts.clock.now();
    if (won && now < term.renewedAt + this.#opts.renewDeadlineMs) {
      term.renewedAt = startedAt;
      this.#armDeadline(term);
    } else if (won) {
      void this.#stepDown('renew-deadline');
    } else if (this.#observed !== null && !this.#holdsTerm(this.#observed, term)) {
      void this.#stepDown('lost');
    }
  }

  #holdsTerm(state: LeaseState, term: Term): boolean {
    return state.holderIdentity === this.#opts.identity && state.leaseTransitions === term.generation;
  }

  /** Reads the Lease and writes ourselves in when we may; the Lease as written, or null when we may not. */
  async #tryAcquireOrRenew(term: Term | null, signal: AbortSignal): Promise<LeaseState | null> {
    const { clock, identity, leaseDurationSeconds } = this.#opts;
    const old = await this.#port.get(signal);
    const wallNow = clock.wallNow();
    if (old === null) {
      // Missing (never created, or deleted): start above any generation this process has seen.
      const record: LeaseRecord = {
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: wallNow,
        renewTime: wallNow,
        leaseTransitions: this.#maxTransitions + 1,
      };
      return this.#observe(await this.#port.create(record, signal));
    }
    this.#observe(old);
    if (term !== null) {
      if (!this.#holdsTerm(old, term)) return null;
      return this.#observe(await this.#port.replace({ ...old, leaseDurationSeconds, renewTime: wallNow }, signal));
    }
    const expired = clock.now() >= this.#observedAt + old.leaseDurationSeconds * 1000;
    if (old.holderIdentity !== '' && old.holderIdentity !== identity && !expired) return null;
    const acquired: LeaseState = {
      ...old,
      holderIdentity: identity,
      leaseDurationSeconds,
      acquireTime: wallNow,
      renewTime: wallNow,
      leaseTransitions: old.leaseTransitions + 1,
    };
    return this.#observe(await this.#port.replace(acquired, signal));
  }

  /** Records what we read or wrote; the expiry clock restarts only when the record changed. */
  #observe(state: LeaseState): LeaseState {
    this.#maxTransitions = Math.max(this.#maxTransitions, state.leaseTransitions);
    if (this.#observed?.resourceVersion !== state.resourceVersion) {
      this.#observed = state;
      this.#observedAt = this.#opts.clock.now();
    }
    const leader = state.holderIdentity || null;
    if (leader !== this.#reported) {
      this.#reported = leader;
      this.#emit({ type: 'new-leader', leader });
      void this.#callSafely(() => this.#callbacks.onNewLeader?.(leader));
    }
    return state;
  }

  #startLeading(generation: number, startedAt: number): void {
    const term: Term = { generation, controller: new AbortController(), renewedAt: startedAt, deadline: undefined };
    this.#term = term;
    this.#armDeadline(term);
    this.#log.info({ lease: this.#opts.lease, identity: this.#opts.identity, generation }, 'leader election: started leading');
    this.#emit({ type: 'started-leading', identity: this.#opts.identity, generation });
    void this.#callSafely(() => this.#callbacks.onStartedLeading({ generation, signal: term.controller.signal }));
  }

  #armDeadline(term: Term): void {
    const { clock, renewDeadlineMs } = this.#opts;
    if (term.deadline !== undefined) clock.clearTimeout(term.deadline);
    const remaining = Math.max(0, term.renewedAt + renewDeadlineMs - clock.now());
    term.deadline = clock.setTimeout(() => {
      if (this.#term === term) void this.#stepDown('renew-deadline');
    }, remaining);
  }

  /** Ends the current term: abort its signal first, then tell the callbacks. */
  async #stepDown(reason: StopReason): Promise<void> {
    const term = this.#term;
    if (term === null) return;
    this.#term = null;
    if (term.deadline !== undefined) this.#opts.clock.clearTimeout(term.deadline);
    term.controller.abort(new Error(`leadership of lease ${this.#opts.lease} ended: ${reason}`));
    const level = reason === 'released' || reason === 'stopped' ? 'info' : 'warn';
    this.#log[level]({ lease: this.#opts.lease, generation: term.generation, reason }, 'leader election: stopped leading');
    this.#emit({ type: 'stopped-leading', identity: this.#opts.identity, generation: term.generation, reason });
    await this.#callSafely(() => this.#callbacks.onStoppedLeading?.());
  }

  /** An AbortController for one attempt, aborted after renewDeadline so a hung call cannot stall the loop. */
  #newAttempt(): AbortController {
    const attempt = new AbortController();
    const timer = this.#opts.clock.setTimeout(() => attempt.abort(new Error('lease call timed out')), this.#opts.renewDeadlineMs);
    attempt.signal.addEventListener('abort', () => this.#opts.clock.clearTimeout(timer), { once: true });
    this.#attempt = attempt;
    return attempt;
  }

  #endAttempt(attempt: AbortController): void {
    if (this.#attempt === attempt) this.#attempt = null;
    if (!attempt.signal.aborted) attempt.abort(new Error('attempt done'));
  }

  async #callSafely(fn: () => void | Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.#emit({ type: 'error', op: 'callback', error: err });
    }
  }

  #emit(event: LeaderEvent): void {
    if (event.type === 'error') this.#log.warn({ lease: this.#opts.lease, op: event.op, err: event.error }, 'leader election: error');
    try {
      this.#callbacks.onEvent?.(event);
    } catch (err) {
      this.#log.warn({ err }, 'leader election: onEvent threw');
    }
  }
}
