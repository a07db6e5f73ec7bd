/**
 * Recovery of one session after a controller restart (or before a resume): ready rows are
 * reconnected (the agent is not started twice), provisional rows (a launch cut short) are cleaned up
 * by what they recorded, and the session ends ready, stopped or failed with a clear message.
 * @module
 */
import { REASON, sessionIdentity } from '../executors/launch-kit/index.js';
import { isProvisionalState, type SessionRecord } from '../inventory/index.js';
import { errorMessage } from '../shared/errors.js';
import { sanitize } from '../shared/sanitize.js';
import { diagnostic, secretIds, sessionExecutorName, setSessionState, type ManagerContext } from './context.js';
import { SessionLaunch } from './launch.js';
import { LAUNCH_KIND_KEY } from './launch-row.js';
import { removeSession } from './remove.js';
import { failOpenStages } from './stages.js';

export async function recoverSession(ctx: ManagerContext, session: SessionRecord, opts: { force: boolean; signal?: AbortSignal }): Promise<void> {
  const id = session.id;
  const row = await ctx.store.getRuntime(id);

  if (session.state === 'removing') {
    // the removal was accepted: finish it (a failure marks the session failed, saying so; remove retries)
    await removeSession(ctx, session, { force: false }).catch((err: unknown) => {
      diagnostic(ctx, id, 'CleanupFailed', `the removal a controller restart interrupted could not be finished: ${sanitize(errorMessage(err))}`);
      if (opts.force) throw err;
    });
    return;
  }

  if (!row) {
    if (session.state === 'launching') {
      const executorName = sessionExecutorName(ctx, session);
      try {
        await ctx.executors.get(executorName)?.removeUnrecorded?.(id);
      } catch (err) {
        diagnostic(ctx, id, 'CleanupFailed', sanitize(errorMessage(err)));
      }
      await interrupted(ctx, session, 'launch was interrupted by a controller restart before anything was recorded; nothing is left running (resume to launch again)');
    } else if (session.state === 'ready' || session.state === 'stopping') {
      await setSessionState(ctx, id, 'failed', { message: 'no runtime record found after a controller restart (resume to launch again)', stage: null });
    }
    return;
  }

  const executor = ctx.executors.get(row.executor);
  if (!executor) {
    await setSessionState(ctx, id, 'failed', { message: `executor '${row.executor}' is not configured any more; cannot recover`, stage: null });
    return;
  }
  const identity = sessionIdentity(id, row.instanceId);

  if (isProvisionalState(row.state)) {
    const fresh = row.metadata[LAUNCH_KIND_KEY] !== 'revive';
    try {
      const profile = session.request.profile;
      await executor.stopInstance({ identity, metadata: row.metadata, ...(profile ? { profile } : {}) }, { destroy: fresh, reason: 'recover_provisional', ...(opts.signal ? { signal: opts.signal } : {}) });
      if (fresh) {
        const ids = secretIds(row.instanceId);
        await ctx.store.deleteSecret(ids.authToken);
        await ctx.store.deleteSecret(ids.bootstrapNonce);
        await ctx.store.releaseRuntime(id, row.instanceId, row.updatedAt);
      } else {
        await ctx.store.upsertRuntime({ ...row, state: 'stopped' });
      }
    } catch (err) {
      const message = sanitize(errorMessage(err));
      diagnostic(ctx, id, REASON.rollbackIncomplete, message);
      await setSessionState(ctx, id, 'failed', {
        message: `${fresh ? 'launch' : 'resume'} was interrupted at checkpoint ${row.state} and its cleanup failed: ${message} (remove with force)`,
        stage: null,
      });
      if (opts.force) throw err;
      return;
    }
    await interrupted(
      ctx,
      session,
      fresh
        ? `launch was interrupted by a controller restart at checkpoint ${row.state}; everything it created was removed (resume to launch again)`
        : `resume was interrupted by a controller restart at checkpoint ${row.state}; agentctl was stopped, the workspace kept (resume again)`,
    );
    return;
  }

  if (row.state === 'ready') {
    // A reconnect: an agent whose agentctl died meanwhile is reported lost, never re-run by itself.
    await new SessionLaunch(ctx, session, { kind: 'revive', row, intent: 'reconnect' }, row.executor, opts.signal ?? new AbortController().signal).run();
    return;
  }

  // `stopped` (or `failed`): nothing runs; settle a stop that the restart interrupted
  if (session.state === 'stopping' || session.state === 'ready' || session.state === 'launching') {
    await setSessionState(ctx, id, 'stopped', null);
  }
}

async function interrupted(ctx: ManagerContext, session: SessionRecord, message: string): Promise<void> {
  await ctx.store.updateSession(session.id, { stages: failOpenStages(session.stages, new Date(), 'interrupted by a controller restart') });
  await setSessionState(ctx, session.id, 'failed', { message, stage: session.stages.find((s) => s.endedAt === null)?.name ?? null });
}
