/**
 * The pipe a local agentctl reports its control port on. agentctl binds port 0 itself and writes
 * one line (protocol/port-report.ts) to an inherited descriptor, so the controller learns the
 * port from the process it started, never from whatever answers on a port it picked beforehand:
 * the nonce, the token and the secret environment go only to that agentctl.
 * @module
 */
import type { Readable } from 'node:stream';
import { MAX_PORT_REPORT_BYTES, parsePortReport, type PortReport } from '../../protocol/index.js';

/** The descriptor number agentctl finds the pipe on (stdin, stdout, stderr, then this). */
export const REPORT_FD = 3;

/**
 * Reads the first line of `stream` as a port report and then closes the stream. Resolves null
 * when the stream ends (or fails) before a whole line; rejects when the line is malformed or
 * longer than {@link MAX_PORT_REPORT_BYTES}.
 */
export function readPortReport(stream: Readable): Promise<PortReport | null> {
  return new Promise((resolve, reject) => {
    let text = '';
    let settled = false;
    const finish = (settle: () => void): void => {
      if (settled) return;
      settled = true;
      stream.destroy();
      settle();
    };
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
      const nl = text.indexOf('\n');
      if (nl !== -1) {
        finish(() => {
          try {
            resolve(parsePortReport(text.slice(0, nl)));
          } catch (err) {
            reject(err as Error);
          }
        });
      } else if (text.length > MAX_PORT_REPORT_BYTES) {
        finish(() => reject(new Error(`port report: longer than ${MAX_PORT_REPORT_BYTES} bytes`)));
      }
    });
    stream.once('end', () => finish(() => resolve(null)));
    stream.once('close', () => finish(() => resolve(null)));
    stream.once('error', () => finish(() => resolve(null)));
  });
}

/**
 * Waits for the report of an agentctl being started: rejects when it exits (or closes the pipe)
 * first, after `timeoutMs`, or when `signal` aborts.
 */
export async function waitForPortReport(
  report: Promise<PortReport | null>,
  exited: Promise<string>,
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<PortReport> {
  opts.signal?.throwIfAborted();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`agentctl did not report its port within ${opts.timeoutMs} ms`)), opts.timeoutMs);
  });
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(opts.signal?.reason instanceof Error ? opts.signal.reason : new Error('aborted'));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
  const died = exited.then((how) => Promise.reject(new Error(`agentctl exited before it answered (${how})`)));
  try {
    const got = await Promise.race([report, died, timeout, aborted]);
    if (got !== null) return got;
    // the pipe closed without a line: say how agentctl ended when it ends before the deadline
    return await Promise.race([died, timeout, aborted]);
  } finally {
    clearTimeout(timer);
    if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
  }
}
