import { describe, expect, it } from 'vitest';
import { AgentctlHttpError, AgentctlTimeoutError, AgentctlUnreachableError, ProtocolError } from './errors.js';
import { DEFAULT_RETRY, backoffDelay, isRetryable, resolveRetryOptions, withRetry } from './retry.js';

const req = { method: 'GET', path: '/health' };
const http = (status: number) =>
  new AgentctlHttpError(req, { status, code: undefined, serverMessage: 'x', mayHaveBeenApplied: false });

describe('retry policy', () => {
  it('doubles the delay per attempt up to the cap', () => {
    const policy = resolveRetryOptions({ attempts: 6, initialDelayMs: 100, maxDelayMs: 1000 });
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(policy, n))).toEqual([100, 200, 400, 800, 1000]);
  });

  it('defaults to 3 attempts from 100ms to 1s', () => {
    expect(resolveRetryOptions(undefined)).toEqual({ attempts: 3, initialDelayMs: 100, maxDelayMs: 1000 });
    expect(DEFAULT_RETRY.attempts).toBe(3);
  });

  it.each([
    [{ attempts: 0 }, 'retry.attempts must be an integer >= 1'],
    [{ attempts: 1.5 }, 'retry.attempts must be an integer >= 1'],
    [{ initialDelayMs: -1 }, 'retry.initialDelayMs must be >= 0'],
    [{ initialDelayMs: 500, maxDelayMs: 100 }, 'retry.maxDelayMs must be >= retry.initialDelayMs'],
  ])('rejects %o by name', (options, message) => {
    expect(() => resolveRetryOptions(options)).toThrow(new TypeError(message));
  });

  it.each([
    ['unreachable', new AgentctlUnreachableError(req, 'x', { mayHaveBeenApplied: false }), true],
    ['timeout', new AgentctlTimeoutError(req, { timeoutMs: 1, mayHaveBeenApplied: false }), true],
    ['502', http(502), true],
    ['503', http(503), true],
    ['504', http(504), true],
    ['500', http(500), false],
    ['404', http(404), false],
    ['401', http(401), false],
    ['protocol error', new ProtocolError(req, 'x'), false],
    ['plain error', new Error('x'), false],
  ])('classifies %s as retryable=%s', (_name, err, expected) => {
    expect(isRetryable(err)).toBe(expected);
  });

  it('stops after the configured attempts and throws the last error', async () => {
    let calls = 0;
    const policy = resolveRetryOptions({ attempts: 3, initialDelayMs: 1, maxDelayMs: 1 });
    await expect(
      withRetry(policy, async () => {
        calls++;
        throw http(503);
      }),
    ).rejects.toMatchObject({ status: 503 });
    expect(calls).toBe(3);
  });

  it('does not repeat a non-retryable failure', async () => {
    let calls = 0;
    const policy = resolveRetryOptions({ attempts: 5, initialDelayMs: 1, maxDelayMs: 1 });
    await expect(
      withRetry(policy, async () => {
        calls++;
        throw http(409);
      }),
    ).rejects.toMatchObject({ status: 409 });
    expect(calls).toBe(1);
  });

  it('returns the first success', async () => {
    const policy = resolveRetryOptions({ attempts: 5, initialDelayMs: 1, maxDelayMs: 1 });
    const result = await withRetry(policy, async (n) => {
      if (n < 3) throw http(502);
      return n;
    });
    expect(result).toBe(3);
  });

  it('stops waiting when the caller aborts', async () => {
    const controller = new AbortController();
    const policy = resolveRetryOptions({ attempts: 5, initialDelayMs: 10_000, maxDelayMs: 10_000 });
    const pending = withRetry(
      policy,
      async () => {
        setTimeout(() => controller.abort(new Error('stop')), 5);
        throw http(503);
      },
      controller.signal,
    );
    await expect(pending).rejects.toThrow('stop');
  });
});
