/** Retry delays: 1 s, 2 s, 4 s … capped at `maxMs`. @module */
export function backoffDelay(attempt: number, maxMs = 15_000): number {
  return Math.min(maxMs, 1000 * 2 ** Math.max(0, attempt));
}

/** Resolves after `ms`, or rejects with an AbortError when `signal` aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new DOMException('aborted', 'AbortError'));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(new DOMException('aborted', 'AbortError'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
