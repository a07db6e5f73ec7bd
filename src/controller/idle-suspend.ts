/**
 * Idle suspension: a ready session whose launch target has `idle: {suspend_after}` and whose
 * agentctl reports it idle for that long (no turn or approval pending, no process the agent started,
 * no shell or exec, no input or output in the window: agentctl decides, API silence never counts) is
 * stopped with its workspace kept and shown `suspended`, with when and why. A real action (exec, a
 * shell, input, a turn, an answer) wakes it (live-access.ts); reads (ls, status, logs) never do.
 *
 * One poll of every such session per period (a quarter of the shortest window, 0.5–30 s), each
 * asked again under the session's lock before it is stopped, so a command that came in meanwhile
 * keeps it running. An agentctl that cannot be asked is never idle.
 * @module
 */
import { idlePolicy, type IdlePolicy } from '../config/index.js';
import { errorMessage } from '../shared/errors.js';
import { sanitize } from '../shared/sanitize.js';
import { diagnostic, type ManagerContext } from './context.js';
import type { StageRecord } from './service.js';
import { stopSession } from './stop.js';

const MIN_POLL_MS = 500;
const MAX_POLL_MS = 30_000;
/** Bound on one activity question (an agentctl that does not answer is busy, not idle). */
const ASK_TIMEOUT_MS = 5000;

/** Starts polling when some launch target suspends; returns what stops it (waiting for a poll in flight). */
export function startIdleSuspension(ctx: ManagerContext, signal: AbortSignal): (() => Promise<void>) | null {
  const targets = [...Object.keys(ctx.config.executors), ...Object.keys(ctx.config.profiles)];
  const windows = targets.map((t) => idlePolicy(ctx.config, t)?.suspendAfterMs).filter((ms): ms is number => ms !== undefined);
  if (windows.length === 0) return null;
  const periodMs = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, Math.floor(Math.min(...windows) / 4)));
  let timer: NodeJS.Timeout | undefined;
  let inflight: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = (): void => {
    inflight = pollOnce(ctx, signal)
      .catch((err: unknown) => ctx.log.warn({ err: sanitize(errorMessage(err)) }, 'idle suspension: a poll failed'))
      .finally(() => {
        if (!stopped && !signal.aborted) timer = setTimeout(tick, periodMs).unref();
      });
  };
  timer = setTimeout(tick, periodMs).unref();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await inflight;
  };
}

async function pollOnce(ctx: ManagerContext, signal: AbortSignal): Promise<void> {
  for (const session of await ctx.store.listSessions()) {
    if (signal.aborted) return;
    if (session.state !== 'ready') continue;
    const policy = idlePolicy(ctx.config, session.executor);
    if (policy === null || (await idleReport(ctx, session.id, policy)) === null) continue;
    await suspendIfIdle(ctx, session.id, policy).catch((err: unknown) => {
      diagnostic(ctx, session.id, 'SuspendFailed', `could not suspend the idle session: ${sanitize(errorMessage(err))}`);
    });
  }
}

/** agentctl's word on the session's activity over the policy's window; null: not ready, or no answer (busy). */
function activity(ctx: ManagerContext, id: string, policy: IdlePolicy): Promise<{ idle: boolean; idle_since: string | null } | null> {
  const live = ctx.live.get(id);
  if (!live) return Promise.resolve(null);
  return live.instance.client.activity({ windowMs: policy.suspendAfterMs, timeoutMs: ASK_TIMEOUT_MS, signal: AbortSignal.timeout(ASK_TIMEOUT_MS) }).catch(() => null);
}

/**
 * Idle, and its agent still running: a session whose agent has ended is left alone, because waking
 * is a resume, which would start that agent again (a raw agent re-running its prompt).
 */
async function idleReport(ctx: ManagerContext, id: string, policy: IdlePolicy): Promise<{ idle_since: string | null } | null> {
  const report = await activity(ctx, id, policy);
  if (report?.idle !== true) return null;
  const live = ctx.live.get(id);
  if (!live || live.agentProcessId === null) return null;
  const agent = await live.instance.client.getProcess(live.agentProcessId, { timeoutMs: ASK_TIMEOUT_MS, signal: AbortSignal.timeout(ASK_TIMEOUT_MS) }).catch(() => null);
  return agent?.status === 'running' ? report : null;
}

/** Under the session's lock: still ready and still idle (asked again), then stopped as `suspended`. */
async function suspendIfIdle(ctx: ManagerContext, id: string, policy: IdlePolicy): Promise<void> {
  await ctx.locks.run(id, async () => {
    const session = await ctx.store.getSession(id);
    if (session?.state !== 'ready') return;
    const report = await idleReport(ctx, id, policy);
    if (report === null) return;
    const at = new Date().toISOString();
    const message = `suspended at ${at}: idle since ${report.idle_since ?? 'it started'} (${formatWindow(policy.suspendAfterMs)} without a turn, a process the agent started, a shell, exec, input or output); send, exec or shell wake it`;
    const stage: StageRecord = { name: 'suspended', status: 'succeeded', startedAt: at, endedAt: at, durationMs: 0, reason: 'Idle', message };
    await stopSession(ctx, session, { reason: 'idle_suspend', state: 'suspended', stages: [...session.stages.filter((s) => s.name !== 'suspended'), stage] });
    ctx.log.info({ session: id, idleSince: report.idle_since }, 'suspended an idle session');
    diagnostic(ctx, id, 'Suspended', message);
  });
}

/** `30m`, `1h30m`, `45s` (how the window reads in messages). */
function formatWindow(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return [h ? `${h}h` : '', m ? `${m}m` : '', s || (!h && !m) ? `${s}s` : ''].join('');
}
