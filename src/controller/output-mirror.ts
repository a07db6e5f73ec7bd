/**
 * The output mirror of a session whose executor cannot read its output while it is stopped
 * (Kubernetes: the output is on the session's volume, served by agentctl only while the Pod runs).
 * Right before such a session is stopped or suspended, the tail of its current agent run (and of the
 * run before, if any) is copied into the inventory, bounded (the last MiB of each, the two latest
 * runs): `logs` of the stopped session answers from it. The workspace keeps the full record, read
 * after a resume. Best effort and bounded in time: a mirror that fails never holds up the stop.
 * While the session runs, the same record is kept up to date as the output streams (output-follow.ts):
 * this copy is its last write.
 * @module
 */
import type { Executor } from '../executors/executor.js';
import { DEFAULT_RECORDED_OUTPUT_BYTES, type RuntimeRecord } from '../inventory/index.js';
import { errorMessage } from '../shared/errors.js';
import { sanitize } from '../shared/sanitize.js';
import { previousAgentProcessId, recordedAgentId } from './agent.js';
import type { ManagerContext } from './context.js';
import type { LiveSession } from './live.js';
import { followersSettled } from './output-follow.js';
import { outputTail } from './output-follow-tail.js';

/** How long the mirror of one stop may take in all: past it, the stop goes on without it. */
const MIRROR_BUDGET_MS = 5_000;

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
  // the live follower (output-follow.ts) ended with the entry: its last write lands before this copy, never after
  await untilAborted(followersSettled(ctx.live, sessionId), signal).catch(() => undefined);
  for (const processId of previous === null ? [current] : [previous, current]) {
    try {
      const { chunks } = await outputTail(live.instance.client, processId, DEFAULT_RECORDED_OUTPUT_BYTES, signal);
      await untilAborted(ctx.store.putRecordedOutput(sessionId, processId, chunks), signal);
    } catch (err) {
      // the message of an agentctl or store error names neither a token nor a connection string; sanitized anyway
      ctx.log.warn({ session: sessionId, process: processId, err: sanitize(errorMessage(err)) }, 'cannot mirror the agent output before the stop; it stays on the workspace, readable after a resume');
      if (signal.aborted) return;
    }
  }
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
