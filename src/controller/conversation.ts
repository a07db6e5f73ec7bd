/**
 * The person in the loop of an ACP session (an agent agentctl speaks the Agent Client Protocol
 * with): a new turn (`send`), cancelling the turn in flight, answering the permission requests the
 * agent waits on, and reading its typed events — each through the live instance's agentctl, so it
 * works the same for every executor.
 * @module
 */
import { isAgentctlHttpError, type InstanceClient } from '../agentctl-client/index.js';
import { LIMITS, type PermissionRequestInfo } from '../protocol/index.js';
import type { SessionRecord } from '../inventory/index.js';
import type { LiveAccess, LiveOptions } from './live-access.js';
import { LaunchValidationError, SessionStateError, type AgentEventPage, type ApproveRequest, type ApproveResult } from './service.js';
import { toView } from './views.js';

type AcpCalls = InstanceClient['acp'];

/** The title an ACP tool call carries, if any. */
function toolTitle(request: PermissionRequestInfo): string | null {
  const title = request.tool_call.title;
  return typeof title === 'string' && title !== '' ? title : null;
}

export class ConversationOps {
  readonly #access: LiveAccess;

  constructor(access: LiveAccess) {
    this.#access = access;
  }

  /**
   * `sendInput` of an ACP session: a new turn with the text (a line from `berth send`: its one
   * trailing newline is dropped). There is no stdin to close: `eof` is refused.
   */
  async send(id: string, data: string | Uint8Array, opts: { eof?: boolean }): Promise<void> {
    const text = typeof data === 'string' ? data : new TextDecoder().decode(data);
    const line = text.endsWith('\n') ? text.slice(0, -1) : text;
    if (opts.eof === true) throw this.#conflict(await this.#access.require(id), 'close the input of', "an ACP agent's stdin carries the protocol; end a turn with berth cancel, the agent with berth stop");
    if (line.trim() === '') throw new LaunchValidationError('data', 'must not be empty: for an ACP agent each send is a new turn');
    await this.#withAcp(id, 'send a turn to', (acp, processId) => acp.prompt(processId, line), { wake: true });
  }

  async cancel(id: string): Promise<void> {
    await this.#withAcp(id, 'cancel the turn of', (acp, processId) => acp.cancel(processId));
  }

  async approve(id: string, answer: ApproveRequest): Promise<ApproveResult> {
    return this.#withAcp(id, 'answer a permission request of', async (acp, processId) => {
      const pending = await acp.permissions(processId);
      const request = answer.requestId === undefined ? pending[0] : pending.find((p) => p.id === answer.requestId);
      if (request === undefined) {
        const which = answer.requestId === undefined ? 'no permission request is pending' : `no permission request '${answer.requestId}' is pending (pending: ${pending.map((p) => p.id).join(', ') || 'none'})`;
        throw this.#conflict(await this.#access.require(id), 'answer a permission request of', which);
      }
      const decision = answer.deny === true ? 'deny' : 'allow';
      const always = answer.always === true;
      await acp.answer(processId, request.id, { decision, always });
      return { requestId: request.id, decision, always, title: toolTitle(request), pending: pending.length - 1 };
    }, { wake: true });
  }

  async agentEvents(id: string, opts: { from?: number; limit?: number; wait?: number; signal?: AbortSignal }): Promise<AgentEventPage> {
    const page = await this.#withAcp(id, 'read the agent events of', (acp, processId) =>
      acp.events(processId, {
        ...(opts.from !== undefined ? { from: opts.from } : {}),
        ...(opts.limit !== undefined ? { limit: Math.min(opts.limit, LIMITS.maxOutputPage) } : {}),
        ...(opts.wait !== undefined && opts.wait > 0 ? { wait: Math.min(opts.wait, LIMITS.maxEventWaitMs) } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      }),
    );
    return { events: page.events, next: page.next, firstAvailable: page.first_available, complete: page.complete };
  }

  /** Whether session `id` runs an ACP agent (as recorded at launch). */
  async isAcp(id: string): Promise<boolean> {
    return (await this.#access.require(id)).request.protocol === 'acp';
  }

  /**
   * Runs `fn` against the ACP calls of the session's current agent process. A raw agent, or an
   * agentctl conflict (no turn runs, a turn still runs, the agent exited), is a SessionStateError
   * naming the session.
   */
  async #withAcp<T>(id: string, action: string, fn: (acp: AcpCalls, processId: string) => Promise<T>, live: LiveOptions = {}): Promise<T> {
    const record = await this.#access.require(id);
    if (record.request.protocol !== 'acp') {
      throw this.#conflict(record, action, `its agent '${record.agent}' is not an ACP agent (protocol: acp); berth send writes to its stdin`);
    }
    try {
      const { value } = await this.#access.withLive(
        id,
        action,
        (session) => {
          if (session.agentProcessId === null) throw this.#conflict(record, action, 'its agent is not running');
          return fn(session.instance.client.acp, session.agentProcessId);
        },
        live,
      );
      return value;
    } catch (err) {
      if (isAgentctlHttpError(err) && err.status === 409) throw this.#conflict(await this.#access.require(id), action, err.serverMessage);
      throw err;
    }
  }

  /** `record`: the session as last read (its state is named in the error). */
  #conflict(record: SessionRecord, action: string, why: string): SessionStateError {
    const { id } = record;
    const state = toView(record, undefined).state;
    return new SessionStateError(id, state, action, why, `cannot ${action} session '${id}': ${why}`);
  }
}
