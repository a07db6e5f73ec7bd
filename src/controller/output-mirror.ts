/**
 * The output mirror of a session whose executor cannot read its output while it is stopped
 * (Kubernetes: the output is on the session's volume, served by agentctl only while the Pod runs).
 * Right before such a session is stopped or suspended, the tail of its current agent run (and of the
 * run before, if any) is copied into the inventory, bounded (the last MiB of each, the two latest
 * runs): `logs` of the stopped session answers from it. The workspace keeps the full record, read
 * after a resume. Best effort and bounded in time: a mirror that fails never holds up the stop.
 * @module
 */
import type { InstanceClient } from '../agentctl-client/index.js';
import type { Executor } from '../executors/executor.js';
import { DEFAULT_RECORDED_OUTPUT_BYTES, type RecordedOutputInput, type RuntimeRecord } from '../inventory/index.js';
import { LIMITS, type OutputChunk } from '../protocol/index.js';
import { errorMessage } from '../shared/errors.js';
import { sanitize } from '../shared/sanitize.js';
import { previousAgentProcessId, recordedAgentId } from './agent.js';
import type { ManagerContext } from './context.js';
import type { LiveSession } from './live.js';

/** How long the mirror of one stop may take in all: past it, the stop goes on without it. */
const MIRROR_BUDGET_MS = 5_000;

/** The client calls the mirror needs (a narrow seam for tests). */
type OutputReader = Pick<InstanceClient, 'readOutput'>;

/**
 * Mirrors the output of `live`'s agent runs before the stop, when `executor` cannot read it later
 * (no `readRecordedOutput`) and the session is connected; never throws. The previous run is written
 * first, so the current one is the latest the inventory keeps.
 */
export async function mirrorOutputBeforeStop(ctx: ManagerContext, sessionId: string, executor: Executor, row: RuntimeRecord, live: LiveSession | undefined): Promise<void> {
  if (executor.readRecordedOutput || !live) return;
  const current = live.agentProcessId ?? recordedAgentId(row.metadata) ?? null;
  if (current === null) return;
  const previous = previousAgentProcessId(current);
  const signal = AbortSignal.timeout(MIRROR_BUDGET_MS);
  for (const processId of previous === null ? [current] : [previous, current]) {
    try {
      const chunks = await outputTail(live.instance.client, processId, DEFAULT_RECORDED_OUTPUT_BYTES, signal);
      await untilAborted(ctx.store.putRecordedOutput(sessionId, processId, chunks), signal);
    } catch (err) {
      // the message of an agentctl or store error names neither a token nor a connection string; sanitized anyway
      ctx.log.warn({ session: sessionId, process: processId, err: sanitize(errorMessage(err)) }, 'cannot mirror the agent output before the stop; it stays on the workspace, readable after a resume');
      if (signal.aborted) return;
    }
  }
}

/**
 * The last chunks of process `processId` holding at least `maxBytes` of output (or all it retains),
 * in sequence order: pages are read backwards from the end, so a long run costs about `maxBytes`
 * plus a page, not everything agentctl retains.
 */
export async function outputTail(client: OutputReader, processId: string, maxBytes: number, signal: AbortSignal): Promise<RecordedOutputInput[]> {
  const probe = await client.readOutput(processId, { from: Number.MAX_SAFE_INTEGER, limit: 1, signal });
  const pages: OutputChunk[][] = [];
  let bytes = 0;
  for (let end = probe.next; end > probe.first_available && bytes < maxBytes; ) {
    const start = Math.max(probe.first_available, end - LIMITS.maxOutputPage);
    const page = await client.readOutput(processId, { from: start, limit: end - start, signal });
    const chunks = page.chunks.filter((c) => c.seq < end);
    pages.unshift(chunks);
    for (const c of chunks) bytes += Buffer.byteLength(c.data, 'base64');
    if (chunks.length === 0) break; // nothing retained there after all
    end = start;
  }
  return pages.flat().map((c) => ({ seq: c.seq, stream: c.stream, data: c.data }));
}

/** `promise`, or a rejection once `signal` aborts (the write itself runs on; only the wait ends). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  promise.catch(() => undefined);
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
