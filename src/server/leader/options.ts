/**
 * The leader elector's options, callbacks, events and clock, and how the options are checked and
 * defaulted (user options → compiled ones).
 * @module
 */
import type { Logger } from '../../shared/logger.js';
import type { LeasePort } from './lease-port.js';

/** Time as the elector sees it; injected so tests drive it by hand (testing/manual-clock.ts). */
export interface LeaderClock {
  /** Monotonic milliseconds: every expiry and deadline is measured on this, never on the Lease's times. */
  now(): number;
  /** Wall-clock time, written into the Lease's renewTime/acquireTime for people and other tools. */
  wallNow(): Date;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const systemClock: LeaderClock = {
  now: () => performance.now(),
  wallNow: () => new Date(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** One term of leadership, handed to onStartedLeading. */
export interface LeaderTerm {
  /**
   * The fencing generation: the Lease's leaseTransitions after this elector took it. It strictly
   * increases with every new term (another holder's, or this identity's again after it stepped down).
   */
  generation: number;
  /** Aborts when this term ends (renew deadline passed, another holder seen, stop() or release()). */
  signal: AbortSignal;
}

/** Why a term ended. */
export type StopReason = 'renew-deadline' | 'lost' | 'released' | 'stopped';

/** What the elector reports for metrics and logs (onEvent). */
export type LeaderEvent =
  | { type: 'started-leading'; identity: string; generation: number }
  | { type: 'stopped-leading'; identity: string; generation: number; reason: StopReason }
  | { type: 'new-leader'; leader: string | null }
  | { type: 'error'; op: 'acquire' | 'renew' | 'release' | 'callback'; error: unknown };

export interface LeaderElectorOptions {
  /** The Lease this elector competes for (kubeLeasePort, or testing/fake-lease.ts). */
  port: LeasePort;
  /** This replica's unique identity (the controller Pod's name). */
  identity: string;
  /** The Lease's name and namespace, for logs and messages. */
  leaseName: string;
  namespace: string;
  /** How long a standby waits, on its own clock, after it last saw the Lease change. @default 15000 */
  leaseDurationMs?: number;
  /** The leader steps down when it could not renew for this long; below leaseDurationMs. @default 10000 */
  renewDeadlineMs?: number;
  /** Pause between attempts (renewals, and acquisitions, those with up to 20 % jitter). @default 2000 */
  retryPeriodMs?: number;
  clock?: LeaderClock;
  /** Jitter source in [0, 1). @default Math.random */
  random?: () => number;
  logger?: Logger;
  /** Starts a term: run the leader's work until `signal` aborts. A rejection is reported (onEvent). */
  onStartedLeading(term: LeaderTerm): void | Promise<void>;
  /** Called once per term when it ends, after the term's signal aborted; release() awaits it. */
  onStoppedLeading?(): void | Promise<void>;
  /** Called when the observed holder changes (this identity included; null when nobody holds it). */
  onNewLeader?(identity: string | null): void;
  /** Every state change and error, for metrics (the leader status gauge) and logs. */
  onEvent?(event: LeaderEvent): void;
}

export interface CompiledElectorOptions {
  identity: string;
  lease: string;
  leaseDurationMs: number;
  leaseDurationSeconds: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  clock: LeaderClock;
  random: () => number;
}

/** Acquisition retries wait retryPeriod × (1 + JITTER × random) so standbys do not move in step. */
export const JITTER = 0.2;

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`leader election: ${name} must be a positive number of milliseconds, got ${value}`);
  return value;
}

/**
 * Checks and defaults the options.
 * @throws TypeError naming the option: empty identity, or durations out of order
 *   (retryPeriod × 1.2 < renewDeadline < leaseDuration, as client-go requires).
 */
export function compileElectorOptions(opts: LeaderElectorOptions): CompiledElectorOptions {
  if (opts.identity.trim() === '') throw new TypeError('leader election: identity must not be empty');
  const leaseDurationMs = positive('leaseDurationMs', opts.leaseDurationMs ?? 15_000);
  const renewDeadlineMs = positive('renewDeadlineMs', opts.renewDeadlineMs ?? 10_000);
  const retryPeriodMs = positive('retryPeriodMs', opts.retryPeriodMs ?? 2_000);
  if (renewDeadlineMs >= leaseDurationMs) {
    throw new TypeError(`leader election: renewDeadlineMs (${renewDeadlineMs}) must be less than leaseDurationMs (${leaseDurationMs})`);
  }
  if (retryPeriodMs * (1 + JITTER) >= renewDeadlineMs) {
    throw new TypeError(`leader election: renewDeadlineMs (${renewDeadlineMs}) must exceed retryPeriodMs × ${1 + JITTER} (${retryPeriodMs * (1 + JITTER)})`);
  }
  return {
    identity: opts.identity,
    lease: `${opts.namespace}/${opts.leaseName}`,
    leaseDurationMs,
    // The Lease carries whole seconds; round up so others never wait less than we promise.
    leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
    renewDeadlineMs,
    retryPeriodMs,
    clock: opts.clock ?? systemClock,
    random: opts.random ?? Math.random,
  };
}
