/**
 * Connecting to a local agentctl: wait for /health (with backoff, failing fast when the process
 * exits), then build a control client.
 * @module
 */
import { ControlClient } from '../../agentctl-client/index.js';
import { httpFetch } from '../../shared/http-fetch.js';

const LOOPBACK = '127.0.0.1';

export function controlClient(port: number, token?: string): ControlClient {
  return new ControlClient({ baseUrl: `http://${LOOPBACK}:${port}`, fetch: httpFetch, timeoutMs: 10_000, ...(token !== undefined ? { token } : {}) });
}

/** One cheap health probe: a single attempt (the client's own retries would add 100 ms+ per refused probe). */
export async function probeControl(port: number, timeoutMs = 1500): Promise<boolean> {
  try {
    const probe = new ControlClient({ baseUrl: `http://${LOOPBACK}:${port}`, fetch: httpFetch, timeoutMs, retry: { attempts: 1 } });
    await probe.health({ timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
    return true;
  } catch {
    return false;
  }
}

/**
 * Polls /health until it answers. Rejects with the exit description when `exited` resolves first,
 * or after `timeoutMs`.
 */
export async function waitHealthy(
  port: number,
  opts: { timeoutMs: number; exited?: Promise<string>; signal?: AbortSignal },
): Promise<void> {
  let exitedWith: string | null = null;
  void opts.exited?.then((d) => (exitedWith = d));
  const started = Date.now();
  const deadline = started + opts.timeoutMs;
  let delay = 5;
  for (;;) {
    opts.signal?.throwIfAborted();
    if (await probeControl(port, 1000)) return;
    if (exitedWith !== null) throw new Error(`agentctl exited before it answered (${exitedWith})`);
    if (Date.now() > deadline) throw new Error(`agentctl did not answer on 127.0.0.1:${port} within ${opts.timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, delay));
    // A refused loopback connect costs microseconds, and agentctl usually answers 80-190 ms after
    // its spawn: poll densely (every 5 ms) for the first seconds (a doubling backoff overshot by
    // ~150 ms per launch, measured with bench:launch), back off only for a slow start.
    if (Date.now() - started > 2000) delay = Math.min(delay * 2, 500);
  }
}
