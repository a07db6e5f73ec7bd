/**
 * Idleness by the agent's real state (pure; the snapshot comes from snapshot.ts).
 *
 * A session is busy while any of these holds, and idle only when none does:
 * - now: an ACP turn is in flight; an ACP permission request waits for an answer; a process the
 *   agent started is alive (the agent itself excluded; for ACP agents its own helpers are excluded
 *   when the snapshot is gathered, see snapshot.ts); a shell or an exec is open;
 * - within the window (`now - t < windowMs`): a raw agent wrote output; an ACP agent recorded an
 *   event (a turn's updates and end, a permission answer); stdin was written to any process; a
 *   child process of the agent was last seen alive; a shell or exec ended; the agent started or exited.
 * So `idle` implies `idleSince <= now - windowMs`: the window is the idle time the caller asks for.
 * API silence is never idleness: reads of files, git or output are no activity, and the absence of
 * requests says nothing.
 * @module
 */
import type { ActivityKind } from '../../protocol/index.js';

/** An agent process of the instance (running or exited). Times are epoch ms. */
export interface AgentActivity {
  readonly id: string;
  readonly running: boolean;
  readonly acp: boolean;
  readonly turnInFlight: boolean;
  readonly pendingPermissions: number;
  readonly startedAt: number;
  readonly endedAt: number | null;
  /** Raw agents: when its last output chunk was recorded. */
  readonly lastOutputAt: number | null;
  /** ACP agents: when its last event was recorded. */
  readonly lastEventAt: number | null;
}

/** A non-agent process of the instance: a shell (the controller's PTY wrapper) or an exec. */
export interface WorkspaceProcessActivity {
  readonly id: string;
  readonly kind: 'shell' | 'exec';
  readonly command: string;
  readonly running: boolean;
  readonly endedAt: number | null;
}

/** A live process the agent started (a descendant or a member of its session). */
export interface AgentChild {
  readonly pid: number;
  readonly command: string;
  /** The agent's process id (agentctl's, e.g. `agent-1`). */
  readonly agent: string;
}

export interface ActivitySnapshot {
  readonly agents: readonly AgentActivity[];
  readonly childProcesses: readonly AgentChild[];
  /** When a child process of an agent was last seen alive (remembered across snapshots). */
  readonly lastChildSeenAt: number | null;
  readonly processes: readonly WorkspaceProcessActivity[];
  /** The last stdin write to any process of the instance. */
  readonly lastInput: { readonly at: number; readonly process: string } | null;
}

interface BusyItem {
  readonly kind: ActivityKind;
  readonly detail: string;
}

interface Assessment {
  readonly idle: boolean;
  /** ISO time the last activity ended, when idle (null when there never was any). */
  readonly idleSince: string | null;
  readonly busy: BusyItem[];
}

/** Something that happened at `at`; busy while it is within the window. */
interface Past {
  readonly at: number;
  readonly kind: ActivityKind;
  readonly what: string;
}

function ago(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms ago`;
  return `${Math.round(ms / 1000)} s ago`;
}

function current(snapshot: ActivitySnapshot): BusyItem[] {
  const busy: BusyItem[] = [];
  for (const a of snapshot.agents) {
    if (!a.running || !a.acp) continue;
    if (a.turnInFlight) busy.push({ kind: 'turn', detail: `a turn of ${a.id} is in flight` });
    if (a.pendingPermissions > 0) {
      const n = a.pendingPermissions;
      busy.push({ kind: 'permission', detail: `${n} permission request${n === 1 ? '' : 's'} of ${a.id} pending` });
    }
  }
  for (const c of snapshot.childProcesses) busy.push({ kind: 'child-process', detail: `${c.command} (pid ${c.pid})` });
  for (const p of snapshot.processes) {
    if (p.running) busy.push({ kind: p.kind, detail: p.kind === 'shell' ? `shell ${p.id} is open` : `${p.command} (${p.id}) is running` });
  }
  return busy;
}

function past(snapshot: ActivitySnapshot): Past[] {
  const events: Past[] = [];
  const add = (at: number | null, kind: ActivityKind, what: string): void => {
    if (at !== null) events.push({ at, kind, what });
  };
  for (const a of snapshot.agents) {
    add(a.startedAt, 'agent', `${a.id} started`);
    add(a.endedAt, 'agent', `${a.id} exited`);
    if (a.acp) add(a.lastEventAt, 'turn', `${a.id} recorded an ACP event`);
    else add(a.lastOutputAt, 'output', `${a.id} wrote output`);
  }
  if (snapshot.childProcesses.length === 0) add(snapshot.lastChildSeenAt, 'child-process', 'a child process of the agent was alive');
  for (const p of snapshot.processes) {
    if (!p.running) add(p.endedAt, p.kind, p.kind === 'shell' ? `shell ${p.id} closed` : `${p.command} (${p.id}) ended`);
  }
  if (snapshot.lastInput !== null) add(snapshot.lastInput.at, 'input', `stdin written to ${snapshot.lastInput.process}`);
  return events;
}

/** Assesses `snapshot` at `now` (epoch ms) against a window of `windowMs`. */
export function assessActivity(snapshot: ActivitySnapshot, options: { readonly windowMs: number; readonly now: number }): Assessment {
  const { windowMs, now } = options;
  const busy = current(snapshot);
  const events = past(snapshot);
  for (const e of events) {
    if (now - e.at < windowMs) busy.push({ kind: e.kind, detail: `${e.what} ${ago(now - e.at)}` });
  }
  if (busy.length > 0) return { idle: false, idleSince: null, busy };
  const last = events.reduce<number | null>((max, e) => (max === null || e.at > max ? e.at : max), null);
  return { idle: true, idleSince: last === null ? null : new Date(last).toISOString(), busy };
}
