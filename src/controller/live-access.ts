/**
 * Reaching a session's live instance: the session must be ready and connected; an instance that
 * turns out unreachable is re-attached once through the executor's refresh (never a relaunch, never
 * a new agent); the agent's state is read on demand, and a dead agentctl shows the agent lost.
 * @module
 */
import { isAgentctlHttpError, isAgentctlUnreachableError } from '../agentctl-client/index.js';
import { REASON, sessionIdentity } from '../executors/launch-kit/index.js';
import type { SessionRecord } from '../inventory/index.js';
import { errorMessage } from '../shared/errors.js';
import { sanitize } from '../shared/sanitize.js';
import { lostAgent, recordedLostAgent } from './agent.js';
import { diagnostic, type ManagerContext } from './context.js';
import { SessionLaunch } from './launch.js';
import type { LiveSession } from './live.js';
import { SessionNotFoundError, SessionStateError, type AgentProcessView } from './service.js';
import type { ProcessInfo } from '../protocol/index.js';
import { toView } from './views.js';

/** Whether an action wakes a session suspended while idle (exec, shell, input, a turn, an answer), or only reads it. */
export interface LiveOptions {
  wake?: boolean;
}

export class LiveAccess {
  readonly #ctx: ManagerContext;
  readonly #shutdown: AbortSignal;
  /** Resumes a suspended session (the manager's resume); set once the manager exists. */
  #wake: ((id: string) => Promise<void>) | null = null;

  constructor(ctx: ManagerContext, shutdown: AbortSignal) {
    this.#ctx = ctx;
    this.#shutdown = shutdown;
  }

  set waker(wake: (id: string) => Promise<void>) {
    this.#wake = wake;
  }

  async require(id: string): Promise<SessionRecord> {
    const record = await this.#ctx.store.getSession(id);
    if (!record) throw new SessionNotFoundError(id);
    return record;
  }

  async requireLive(id: string, action: string, opts: LiveOptions = {}): Promise<LiveSession> {
    let record = await this.require(id);
    if (record.state === 'suspended' && opts.wake === true && this.#wake !== null) {
      // a real action on a session suspended while idle: it wakes (a resume), then the action runs
      await this.#wake(id);
      record = await this.require(id);
    }
    const live = this.#ctx.live.get(id);
    if (record.state !== 'ready' || !live) {
      const hint =
        record.state === 'launching'
          ? 'wait until it is ready'
          : record.state === 'stopped' || record.state === 'failed'
            ? `resume it first (berth resume ${id})`
            : record.state === 'suspended'
              ? `it was suspended while idle: berth send, exec or shell wake it, as does berth resume ${id}`
              : 'try again later';
      throw new SessionStateError(id, toView(record, undefined).state, action, hint);
    }
    return live;
  }

  /**
   * Runs `fn` against the live instance. When agentctl turns out to be unreachable (a dropped
   * connection or forward, agentctl died, the machine slept), the session is re-attached once under
   * its lock through the executor's refresh — no relaunch, no stage reset, and never a new agent: an
   * agent whose agentctl died is reported lost — then `fn` runs again.
   */
  async withLive<T>(id: string, action: string, fn: (live: LiveSession) => Promise<T>, opts: LiveOptions = {}): Promise<{ live: LiveSession; value: T }> {
    const live = await this.requireLive(id, action, opts);
    try {
      return { live, value: await fn(live) };
    } catch (err) {
      if (!isAgentctlUnreachableError(err)) throw err;
      diagnostic(this.#ctx, id, REASON.reconnecting, 'agentctl is unreachable; reconnecting');
      await this.#ctx.locks.run(id, async () => {
        if (this.#ctx.live.get(id) !== live) return; // someone else already reconnected
        const session = await this.require(id);
        const row = await this.#ctx.store.getRuntime(id);
        if (!row || row.state !== 'ready') return;
        try {
          await new SessionLaunch(this.#ctx, session, { kind: 'revive', row, intent: 'reconnect' }, row.executor, this.#shutdown).refresh(live);
        } catch (refreshErr) {
          const message = sanitize(errorMessage(refreshErr));
          diagnostic(this.#ctx, id, 'ReconnectFailed', message);
          throw new SessionStateError(id, 'ready', action, `its workspace cannot be reached: ${message} (check with berth status ${id}; berth resume ${id} retries)`);
        }
      });
      const again = await this.requireLive(id, action);
      return { live: again, value: await fn(again) };
    }
  }

  /**
   * Reads the agent's current status into `live`; false when agentctl could not be asked. An
   * agentctl that cannot be reached is checked with the executor's cheap status: when nothing runs
   * any more the agent is shown lost at once (not `running` until the next command).
   */
  async refreshAgent(id: string, live: LiveSession): Promise<boolean> {
    if (live.agentProcessId === null) return false;
    try {
      const info = await live.instance.client.getProcess(live.agentProcessId, { timeoutMs: 1500, signal: AbortSignal.timeout(2000) });
      const recordedLost = info.status !== 'running' ? recordedLostAgent((await this.#ctx.store.getRuntime(id))?.metadata ?? {}) : null;
      live.agent = recordedLost?.id === info.id ? recordedLost : { id: info.id, status: info.status, exitCode: info.exit_code, ...acpProgress(info) };
      return true;
    } catch (err) {
      // not an answer from agentctl (refused, reset, timed out, a forward to a Pod that is gone): ask the executor
      if (!isAgentctlHttpError(err)) await this.#checkInstanceAlive(id, live);
      return false;
    }
  }

  async #checkInstanceAlive(id: string, live: LiveSession): Promise<void> {
    const row = await this.#ctx.store.getRuntime(id);
    const executor = row ? this.#ctx.executors.get(row.executor) : undefined;
    // an agent seen to run to its end is not lost when its instance goes afterwards
    if (!row || !executor || live.agentProcessId === null || live.agent?.status === 'exited') return;
    try {
      const status = await executor.status({ identity: sessionIdentity(id, row.instanceId), metadata: row.metadata });
      if (status.liveness === 'stopped' || status.liveness === 'missing') live.agent = lostAgent(live.agentProcessId, `its agentctl is not running (${status.detail})`);
    } catch {
      // cannot tell: keep the last known state
    }
  }
}

/** An ACP agent's turns and the permission requests waiting for a person, while it runs (nothing for a raw agent). */
function acpProgress(info: ProcessInfo): Pick<AgentProcessView, 'turns' | 'turnRunning' | 'pendingApprovals' | 'usage'> {
  if (info.acp === undefined) return {};
  const u = info.acp.usage;
  const usage = u === undefined ? {} : { usage: { toolCalls: u.tool_calls, inputTokens: u.input_tokens, outputTokens: u.output_tokens, totalTokens: u.total_tokens, context: u.context, cost: u.cost } };
  return { turns: info.acp.turns, turnRunning: info.acp.state === 'prompting', pendingApprovals: info.acp.pending_permissions, ...usage };
}
