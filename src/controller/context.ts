/**
 * What the manager's parts share: the store, executors, events, the live map, locks and hooks.
 * @module
 */
import { resolveProfile, type ResolvedConfig } from '../config/index.js';
import type { Executor, ExecutorProfileSnapshot } from '../executors/executor.js';
import type { Inventory, SessionRecord } from '../inventory/index.js';
import type { KeyedLock } from '../shared/locks.js';
import type { Logger } from '../shared/logger.js';
import type { SessionEvents } from './events.js';
import type { TestHooks } from './hooks.js';
import type { LiveSessions } from './live.js';
import type { SessionError, SessionState } from './service.js';

export interface ManagerContext {
  store: Inventory;
  config: ResolvedConfig;
  /** Executor instances by config entry name (only implemented types). */
  executors: ReadonlyMap<string, Executor>;
  events: SessionEvents;
  live: LiveSessions;
  /** Per-session locks: launch, stop, resume, remove and recovery of one session run one at a time. */
  locks: KeyedLock;
  log: Logger;
  hooks: TestHooks;
  /** Values of approved secret env names (controller-side secrets). */
  secretSource: (name: string) => string | undefined;
  /** Identifies this controller run: its shells' process ids carry it (see shell.ts). */
  runId: string;
  /** The profile snapshot of a launch target name, as resolved now (see executors/factory.ts). */
  snapshotProfile: (name: string) => ExecutorProfileSnapshot;
  /** The egress proxy serve runs (`egress.listen`): told when a session's credential is deleted, closed with the manager. */
  egressProxy?: { revoke(sessionId: string): void; close(): Promise<void> } | null;
}

/**
 * The executor entry a session runs on: the one its recorded profile snapshot names, or (rows from
 * before snapshots were recorded) what its launch target resolves to now.
 */
export function sessionExecutorName(ctx: ManagerContext, session: SessionRecord): string {
  return session.request.profile?.executor ?? resolveProfile(ctx.config, session.executor)?.executor.name ?? session.executor;
}

/** Secret names in runtime rows (spec Appendix B) and their metadata keys. */
export const SECRET_REF = {
  authToken: 'AGENTCTL_AUTH_TOKEN',
  bootstrapNonce: 'AGENTCTL_BOOTSTRAP_NONCE',
} as const;

/** Deterministic secret ids per instance, so a crash between storing and recording them leaks nothing. */
export function secretIds(instanceId: string): { authToken: string; bootstrapNonce: string } {
  return { authToken: `agentctl-auth-${instanceId}`, bootstrapNonce: `agentctl-bootstrap-${instanceId}` };
}

/** Writes a session state (+ error) and emits the state event. */
export async function setSessionState(ctx: ManagerContext, sessionId: string, state: SessionState, error: SessionError | null, extra: { workspacePath?: string | null } = {}): Promise<void> {
  const updated = await ctx.store.updateSession(sessionId, { state, error, ...extra });
  if (!updated) return;
  ctx.events.emit({ type: 'state', sessionId, state, error, at: updated.updatedAt });
}

export function diagnostic(ctx: ManagerContext, sessionId: string, reason: string, message: string): void {
  ctx.events.emit({ type: 'diagnostic', sessionId, reason, message, at: new Date().toISOString() });
}
