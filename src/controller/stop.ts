/**
 * Stopping a session under its lock: the instance stopped with its workspace kept, the runtime row
 * `stopped`, the session `stopped` (a person's `berth stop`) or `suspended` (idle: it wakes on the
 * next real action). Shared by SessionManager.stop and the idle suspender. An executor that cannot
 * read a stopped session's output has it mirrored to the inventory first (output-mirror.ts).
 * @module
 */
import type { StopResult } from '../executors/executor.js';
import type { SessionRecord } from '../inventory/index.js';
import { errorMessage } from '../shared/errors.js';
import { sanitize } from '../shared/sanitize.js';
import { setSessionState, type ManagerContext } from './context.js';
import { mirrorOutputBeforeStop } from './output-mirror.js';
import { stopRecorded } from './remove.js';
import { revokeEgress } from './egress.js';
import { SessionStateError, type SessionView, type StageRecord } from './service.js';

interface StopSessionOptions {
  /** Logged by the executor (`user_stop`, `idle_suspend`). */
  reason: string;
  state: 'stopped' | 'suspended';
  /** Recorded with the state (the suspension's stage, saying when and why). */
  stages?: StageRecord[];
}

/** Call under the session's lock, with the session as just read. */
export async function stopSession(ctx: ManagerContext, session: SessionRecord, opts: StopSessionOptions): Promise<void> {
  const { id } = session;
  if (session.state === 'removing') throw new SessionStateError(id, 'removing', 'stop', 'it is being removed');
  const row = await ctx.store.getRuntime(id);
  if (!row || row.state === 'stopped') {
    ctx.live.take(id);
    if (session.state === 'ready' || session.state === 'stopping' || session.state === 'suspended') await setSessionState(ctx, id, opts.state, null);
    return;
  }
  const executor = ctx.executors.get(row.executor);
  if (!executor) throw new SessionStateError(id, session.state as SessionView['state'], 'stop', `executor '${row.executor}' is not configured any more`);
  await setSessionState(ctx, id, 'stopping', session.error);
  // first: the agent's token stops working before anything else of the stop
  await revokeEgress(ctx, id);
  const live = ctx.live.detach(id);
  let stopped: StopResult | void;
  try {
    // while agentctl still answers: `logs` of the stopped session reads this copy (bounded, best effort)
    await mirrorOutputBeforeStop(ctx, id, executor, row, live);
    stopped = await stopRecorded(executor, session, row, live, { destroy: false, reason: opts.reason });
  } catch (err) {
    const message = sanitize(errorMessage(err));
    await setSessionState(ctx, id, 'failed', { message: `stop failed: ${message}`, stage: null });
    throw err;
  } finally {
    await live?.instance.close().catch(() => undefined);
  }
  await ctx.store.upsertRuntime({ ...row, metadata: { ...row.metadata, ...stopped?.metadata }, state: 'stopped' });
  if (opts.stages) await ctx.store.updateSession(id, { stages: opts.stages });
  await setSessionState(ctx, id, opts.state, null);
}
