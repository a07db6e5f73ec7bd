/**
 * Retry policy of the agentctl client: which failures are worth repeating and how long to wait.
 * Only idempotent calls are ever retried; the caller of `withRetry` decides that.
 * @module
 */
import { isAgentctlHttpError, isAgentctlTimeoutError, isAgentctlUnreachableError } from './errors.js';

/** Backoff settings of idempotent calls. */
export interface RetryOptions {
  /** Total attempts including the first (1 disables retries). @default 3 */
  readonly attempts?: number;
  /** Delay before the second attempt, in ms; doubles per attempt. @default 100 */
  readonly initialDelayMs?: number;
  /** Upper bound of one delay, in ms. @default 1000 */
  readonly maxDelayMs?: number;
}

export type ResolvedRetryOptions = Readonly<Required<RetryOptions>>;

export const DEFAULT_RETRY: ResolvedRetryOptions = { attempts: 3, initialDelayMs: 100, maxDelayMs: 1000 };

/** Merges user retry options over the defaults; throws a TypeError naming a bad option. */
export function resolveRetryOptions(options: RetryOptions | undefined, name = 'retry'): ResolvedRetryOptions {
  const resolved = { ...DEFAULT_RETRY, ...options };
  if (!Number.isInteger(resolved.attempts) || resolved.attempts < 1) {
    throw new TypeError(`${name}.attempts must be an integer >= 1`);
  }
  if (!(resolved.initialDelayMs >= 0)) throw new TypeError(`${name}.initialDelayMs must be >= 0`);
  if (!(resolved.maxDelayMs >= resolved.initialDelayMs)) {
    throw new TypeError(`${name}.maxDelayMs must be >= ${name}.initialDelayMs`);
  }
  return resolved;
}

/**
 * Delay before attempt `attempt + 1`, given that `attempt` (1-based) just failed.
 * No jitter: one controller talks to one daemon, so there is no herd to spread.
 */
export function backoffDelay(policy: ResolvedRetryOptions, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, attempt - 1));
}

/** Gateway statuses a port-forward or proxy returns while agentctl is (re)starting. */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** True for failures an idempotent call may repeat: unreachable, timeout, 502/503/504. */
export function isRetryable(err: unknown): boolean {
  if (isAgentctlUnreachableError(err) || isAgentctlTimeoutError(err)) return true;
  return isAgentctlHttpError(err) && RETRYABLE_STATUSES.has(err.status);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `attempt(n)` until it succeeds, fails with a non-retryable error, or the policy's attempts
 * are used up (the last error is thrown). A caller abort stops the waiting at once.
 */
export async function withRetry<T>(
  policy: ResolvedRetryOptions,
  attempt: (n: number) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (n >= policy.attempts || !isRetryable(err) || signal?.aborted) throw err;
      await sleep(backoffDelay(policy, n), signal);
    }
  }
}
