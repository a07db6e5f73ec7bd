/**
 * Removing a session: its recorded instance destroyed (or, without a row, whatever a launch may
 * have left under its name), its secrets and its row deleted, then the session itself. Called by
 * `berth rm` under the session's lock, and by recovery for a removal a controller restart (or a
 * new leader) interrupted, so that a `rm` that was accepted ends with the session gone.
 * @module
 */
import { revokeEgress } from './egress.js';
import type { Executor, StopOptions, StopResult } from '../executors/executor.js';
import { sessionIdentity } from '../executors/launch-kit/index.js';
import type { RuntimeRecord, SessionRecord } from '../inventory/index.js';
import { errorMessage } from '../shared/errors.js';
import { sanitize } from '../shared/sanitize.js';
import { diagnostic, secretIds, sessionExecutorName, setSessionState, type ManagerContext } from './context.js';
import type { LiveSession } from './live.js';
import { repoCredentialId } from './repo-credentials.js';

/** How long a stop (or the destroy of a remove) may take. */
const STOP_TIMEOUT_MS = 180_000;

/**
 * Removes `session` (the caller holds its lock). A cleanup failure marks it failed and throws,
 * unless `force`: then the session is forgotten anyway, with a CleanupFailed diagnostic.
 */
export async function removeSession(ctx: ManagerContext, session: SessionRecord, opts: { force: boolean }): Promise<void> {
  const { id } = session;
  const row = await ctx.store.getRuntime(id);
  await setSessionState(ctx, id, 'removing', session.error);
  await revokeEgress(ctx, id);
  const live = ctx.live.detach(id);
  try {
    const executorName = row?.executor ?? sessionExecutorName(ctx, session);
    const executor = ctx.executors.get(executorName);
    if (!executor) throw new Error(`executor '${executorName}' is not configured any more`);
    if (row) {
      await stopRecorded(executor, session, row, live, { destroy: true, reason: 'session_removed' });
      const ids = secretIds(row.instanceId);
      await ctx.store.deleteSecret(ids.authToken);
      await ctx.store.deleteSecret(ids.bootstrapNonce);
    } else {
      await executor.removeUnrecorded?.(id);
    }
  } catch (err) {
    const message = sanitize(errorMessage(err));
    if (!opts.force) {
      await setSessionState(ctx, id, 'failed', { message: `remove failed: ${message} (retry, or remove with force)`, stage: null });
      throw err;
    }
    ctx.log.warn({ session: id, err: message }, 'forced remove: cleanup failed, forgetting the session anyway');
    diagnostic(ctx, id, 'CleanupFailed', message);
  } finally {
    await live?.instance.close().catch(() => undefined);
  }
  await ctx.store.deleteSecret(repoCredentialId(id));
  await ctx.store.deleteSession(id);
  diagnostic(ctx, id, 'Removed', `session ${id} removed`);
  ctx.events.emit({ type: 'removed', sessionId: id, at: new Date().toISOString() });
  ctx.events.forget(id);
}

/** Stops the recorded instance of `session` (through its control client when still connected), under STOP_TIMEOUT_MS. */
export function stopRecorded(executor: Executor, session: SessionRecord, row: RuntimeRecord, live: LiveSession | undefined, opts: Omit<StopOptions, 'signal'>): Promise<StopResult | void> {
  const { profile } = session.request;
  return executor.stopInstance(
    { identity: sessionIdentity(session.id, row.instanceId), metadata: row.metadata, ...(live ? { control: live.instance.control } : {}), ...(profile ? { profile } : {}) },
    { ...opts, signal: AbortSignal.timeout(STOP_TIMEOUT_MS) },
  );
}
