/**
 * Gathers an instance's ActivitySnapshot (assess.ts) from its process supervisor and /proc, and
 * remembers across polls what a single look cannot see: when a child process of an agent was last
 * seen alive, and when each ACP agent's session opened.
 *
 * Sources: agents and workspace processes from the supervisor (a running `kind: process` process
 * whose argv is the controller's PTY wrapper, `sh -c … berth-shell …`, is a shell; any other is an
 * exec); an ACP turn and pending permissions from its AcpClient's info; a raw agent's last output
 * and an ACP agent's last event from their logs; the last stdin write from the supervisor.
 *
 * ACP helpers: an ACP adapter may run long-lived helpers of its own (an adapter such as
 * claude-code-acp runs the agent's CLI, which may run MCP servers), which would keep the session
 * busy for ever. For an ACP agent, processes started before its ACP session opened (the `session`
 * event) are taken as the adapter's and do not count; processes started later (a tool call's
 * `sleep 1200`) do. A helper started lazily after that (on the first turn) keeps the session busy
 * until the agent exits: the rule errs towards busy, never towards suspending work. The demo ACP
 * agent starts no process at all.
 * @module
 */
import type { ActivityReport, ProcessInfo } from '../../protocol/index.js';
import type { ProcessSupervisor } from '../processes/supervisor.js';
import { assessActivity, type ActivitySnapshot, type AgentActivity, type AgentChild, type WorkspaceProcessActivity } from './assess.js';
import { agentProcesses, commandOf, epochToTicks, readProcTable, type StatEntry } from './procs.js';

/** argv[3] of the controller's shell wrapper (src/controller/shell.ts, SHELL_MARKER). */
const SHELL_MARKER = 'berth-shell';
/** Events read per page while looking for an ACP agent's `session` event. */
const EVENT_PAGE = 1000;

function isShell(command: readonly string[]): boolean {
  return command[0] === 'sh' && command[1] === '-c' && command[3] === SHELL_MARKER;
}

function epoch(iso: string | null): number | null {
  if (iso === null) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}

/** Where the search for an ACP agent's session event stands. */
interface SessionOpen {
  scanned: number;
  at: number | null;
}

export class ActivityMonitor {
  #lastChildSeenAt: number | null = null;
  /** Per ACP agent (by process id): when its ACP session opened, once found. */
  readonly #sessions = new Map<string, SessionOpen>();

  constructor(
    private readonly processes: ProcessSupervisor,
    private readonly procTable: () => readonly StatEntry[] = readProcTable,
  ) {}

  /** The activity report at `now`, as served on `GET …/activity`. */
  report(windowMs: number, now = Date.now()): ActivityReport {
    const assessment = assessActivity(this.snapshot(now), { windowMs, now });
    return { idle: assessment.idle, idle_since: assessment.idleSince, window_ms: windowMs, at: new Date(now).toISOString(), busy: assessment.busy };
  }

  snapshot(now: number): ActivitySnapshot {
    const all = this.processes.list();
    const agents = all.filter((p) => p.kind === 'agent');
    const running = agents.filter((p) => p.status === 'running' && p.pid !== null);
    const childProcesses = running.length === 0 ? [] : this.#children(running, now);
    if (childProcesses.length > 0) this.#lastChildSeenAt = now;
    return {
      agents: agents.map((a) => this.#agent(a)),
      childProcesses,
      lastChildSeenAt: this.#lastChildSeenAt,
      processes: all.filter((p) => p.kind !== 'agent').map(workspaceProcess),
      lastInput: this.processes.lastInput,
    };
  }

  #agent(info: ProcessInfo): AgentActivity {
    const running = info.status === 'running';
    const acp = info.protocol === 'acp';
    return {
      id: info.id,
      running,
      acp,
      turnInFlight: info.acp?.state === 'prompting',
      pendingPermissions: info.acp?.pending_permissions ?? 0,
      startedAt: epoch(info.started_at) ?? 0,
      endedAt: epoch(info.ended_at),
      // an exited agent's output and events ended by its exit (endedAt): no need to load them
      lastOutputAt: running && !acp ? this.#lastOutputAt(info) : null,
      lastEventAt: running && acp ? this.#lastEventAt(info) : null,
    };
  }

  #lastOutputAt(info: ProcessInfo): number | null {
    if (info.next_seq === 0) return null;
    const chunk = this.processes.page(info.id, info.next_seq - 1, 1).slice.chunks[0];
    return chunk === undefined ? null : epoch(chunk.at);
  }

  #lastEventAt(info: ProcessInfo): number | null {
    const next = info.acp?.next_event_seq ?? 0;
    if (next === 0) return null;
    const event = this.processes.events(info.id, next - 1, 1).events[0];
    return event === undefined ? null : epoch(event.at);
  }

  #children(running: readonly ProcessInfo[], now: number): AgentChild[] {
    const table = this.procTable();
    const children: AgentChild[] = [];
    for (const agent of running) {
      const opened = agent.protocol === 'acp' ? this.#sessionOpenedAt(agent) : null;
      const notBefore = opened === null ? null : epochToTicks(opened, now);
      for (const entry of agentProcesses(table, agent.pid as number, notBefore)) {
        children.push({ pid: entry.pid, command: commandOf(entry), agent: agent.id });
      }
    }
    return children;
  }

  /** When ACP agent `info`'s session opened (its `session` event), or null while it has not (or the event was dropped). */
  #sessionOpenedAt(info: ProcessInfo): number | null {
    let state = this.#sessions.get(info.id);
    if (state === undefined) {
      state = { scanned: 0, at: null };
      this.#sessions.set(info.id, state);
    }
    const next = info.acp?.next_event_seq ?? 0;
    while (state.at === null && state.scanned < next) {
      const page = this.processes.events(info.id, state.scanned, EVENT_PAGE);
      const session = page.events.find((e) => e.event.type === 'session');
      if (session !== undefined) state.at = epoch(session.at);
      if (page.next <= state.scanned) break;
      state.scanned = page.next;
    }
    return state.at;
  }
}

function workspaceProcess(info: ProcessInfo): WorkspaceProcessActivity {
  const shell = isShell(info.command);
  const command = info.command.join(' ');
  return {
    id: info.id,
    kind: shell ? 'shell' : 'exec',
    command: command.length > 120 ? `${command.slice(0, 119)}…` : command,
    running: info.status === 'running',
    endedAt: epoch(info.ended_at),
  };
}
