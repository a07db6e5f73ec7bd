/**
 * The agent process of a session: which run a runtime row records, starting it (never twice, never
 * again after it finished), and the rule that an agent whose agentctl died is *lost* — reported, and
 * started again only by an explicit `berth resume`.
 * @module
 */
import { AGENTCTL_PLACEHOLDER } from '../config/index.js';
import type { ExecutorInstance } from '../executors/executor.js';
import { LaunchError } from '../executors/launch-kit/index.js';
import type { SessionRecord } from '../inventory/index.js';
import { errorMessage } from '../shared/errors.js';
import { sanitize } from '../shared/sanitize.js';
import { diagnostic, type ManagerContext } from './context.js';
import type { AgentProcessView } from './service.js';
import { staleShells } from './shell.js';
import { readLoginFiles } from './login-files.js';
import { startAgentProcess } from './prompt-input.js';
import { spawnFailure } from './spawn-failure.js';

export const AGENT_START_STAGE = 'agent_start';
export const AGENT_PROCESS_KEY = 'agent_process_id';
/** Runtime metadata key: why the recorded agent is lost (its agentctl died); absent while it is not. */
export const AGENT_LOST_KEY = 'agent_lost';

/** The agent process a runtime row records (the latest run), if any. */
export function recordedAgentId(metadata: Readonly<Record<string, string>>): string | undefined {
  return metadata[AGENT_PROCESS_KEY];
}

/** Agent runs are `agent-1`, `agent-2` …: the run before `agent-N`, or null for the first (or a foreign id). */
export function previousAgentProcessId(id: string): string | null {
  const m = /^agent-([1-9]\d*)$/.exec(id);
  const n = m ? Number(m[1]) : 0;
  return n > 1 ? `agent-${n - 1}` : null;
}

/**
 * Kills the shells an earlier controller run left running in the instance: their terminals are
 * gone with that controller, so nobody can reach them again (best effort: a failure is logged).
 */
export async function endStaleShells(ctx: ManagerContext, sessionId: string, instance: ExecutorInstance): Promise<void> {
  try {
    const stale = staleShells(await instance.client.listProcesses(), ctx.runId);
    for (const p of stale) await instance.client.signal(p.id, 'SIGKILL').catch((err: unknown) => ctx.log.warn({ session: sessionId, process: p.id, err: errorMessage(err) }, 'cannot end stale shell'));
    if (stale.length > 0) diagnostic(ctx, sessionId, 'ShellsEnded', `ended ${stale.length} shell(s) left open by an earlier controller`);
  } catch (err) {
    ctx.log.warn({ session: sessionId, err: sanitize(errorMessage(err)) }, 'cannot list processes to end stale shells');
  }
}

/**
 * Starts the session's agent unless one is already running in the instance (after a reconnect the
 * agent of the earlier controller keeps running: it must not be started twice). `recordedAgentId`
 * is the agent the ready row recorded for this same agentctl (pure reconnects only): when it has
 * run to its end it is not started again — it finished its task, and a controller restart must not
 * repeat it. A new agent starts when agentctl itself was (re)started (a resume after stop, or after
 * agentctl died) or when no agent was recorded yet (a launch cut short before the agent started).
 * `freshInstance`: the instance was created by this very launch, so nothing runs in it yet and the
 * process list (a round trip through the forward on Kubernetes) is skipped.
 */
export async function ensureAgent(
  ctx: ManagerContext,
  session: SessionRecord,
  instance: ExecutorInstance,
  recordedAgentId?: string,
  freshInstance = false,
): Promise<AgentProcessView> {
  const processes = freshInstance ? [] : await instance.client.listProcesses();
  const agents = processes.filter((p) => p.kind === 'agent');
  const running = agents.find((p) => p.status === 'running');
  if (running) {
    ctx.log.info({ session: session.id, process: running.id }, 'agent already running; not starting another');
    return { id: running.id, status: 'running', exitCode: null };
  }
  const finished = instance.revived || recordedAgentId === undefined ? undefined : agents.find((p) => p.id === recordedAgentId);
  if (finished) {
    ctx.log.info({ session: session.id, process: finished.id, exitCode: finished.exit_code }, 'agent already ran to its end; not starting it again');
    return { id: finished.id, status: 'exited', exitCode: finished.exit_code };
  }
  const id = `agent-${agents.length + 1}`;
  const command = expandAgentctl(session.request.agentCommand, instance.agentctlCommand);
  // An ACP agent started again (resume, a replaced Pod, agentctl restarted) continues the last run's conversation.
  const resumeFrom = session.request.protocol === 'acp' ? lastRun(agents) : null;
  const login = session.request.loginFiles === undefined ? null : readLoginFiles(session.request.loginFiles);
  if (login !== null && login.skipped.length > 0) ctx.log.info({ session: session.id, skipped: login.skipped }, 'agent login files not found on this host; the agent may ask for a login');
  const seeded = (session.request.stateFiles ?? []).map((f) => ({ path: f.path, data_base64: Buffer.from(f.content).toString('base64') }));
  const agentFiles = [...seeded, ...(login?.files ?? [])];
  try {
    // The prompt goes in as the agent profile asks: argv, stdin or a file (prompt-input.ts).
    const info = await startAgentProcess(instance.client, session.request, command, instance.workspacePath, id, { resumeFrom, agentFiles });
    return { id: info.id, status: 'running', exitCode: null };
  } catch (err) {
    const failed = spawnFailure(err);
    if (failed !== undefined) {
      const notFound = failed.errno === 'ENOENT';
      throw new LaunchError(
        AGENT_START_STAGE,
        notFound ? 'AgentCommandNotFound' : 'AgentStartFailed',
        notFound
          ? `agent '${session.agent}': command '${command[0] ?? ''}' was not found (check agents.${session.agent}.command in berth.yaml and PATH)`
          : `agent '${session.agent}': cannot start '${command[0] ?? ''}': ${failed.reason} (${failed.errno})`,
        { cause: err },
      );
    }
    throw err;
  }
}

/** The latest agent run among `agents` (`agent-N` with the highest N), if any. */
function lastRun(agents: readonly { id: string }[]): string | null {
  let best: { id: string; n: number } | null = null;
  for (const a of agents) {
    const m = /^agent-([1-9]\d*)$/.exec(a.id);
    const n = m ? Number(m[1]) : 0;
    if (n > 0 && (best === null || n > best.n)) best = { id: a.id, n };
  }
  return best?.id ?? null;
}

/** The view of an agent whose agentctl died with it: not running, no exit code, and why. */
export function lostAgent(id: string, reason: string): AgentProcessView {
  return { id, status: 'lost', exitCode: null, lostReason: reason };
}

/** The agent a ready row records as lost (after a restart the live map starts empty), if any. */
export function recordedLostAgent(metadata: Readonly<Record<string, string>>): AgentProcessView | null {
  const id = metadata[AGENT_PROCESS_KEY];
  const reason = metadata[AGENT_LOST_KEY];
  return id !== undefined && reason !== undefined ? lostAgent(id, reason) : null;
}

/** `{{agentctl}} ARGS…` → the instance's agentctl argv + ARGS (other commands unchanged). */
function expandAgentctl(command: readonly string[], agentctl: readonly string[]): string[] {
  return command[0] === AGENTCTL_PLACEHOLDER ? [...agentctl, ...command.slice(1)] : [...command];
}
