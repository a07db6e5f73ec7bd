/**
 * `BerthClient.acp`: the calls of sessions whose agent speaks the Agent Client Protocol — cancel
 * the turn in flight, answer a permission request, read the agent's typed events. It shares the
 * client's transport (authentication, timeouts, error decoding). Browser-safe.
 * @module
 */
import type { z } from 'zod';
import { AgentEventPageSchema, ApproveResultSchema, type AgentEventPage, type ApproveRequest, type ApproveResult } from './acp.js';
import { apiRoutes } from './routes.js';

/** The BerthClient calls this client goes through. */
interface AcpTransport {
  json<S extends z.ZodType>(method: string, path: string, schema: S, opts: { body?: unknown; signal?: AbortSignal | undefined }): Promise<z.infer<S>>;
  request(method: string, path: string): Promise<unknown>;
}

export class AcpSessionClient {
  readonly #t: AcpTransport;

  constructor(transport: AcpTransport) {
    this.#t = transport;
  }

  /** Cancels the turn in flight (409 when none runs, or the agent is raw). */
  async cancel(id: string): Promise<void> {
    await this.#t.request('POST', apiRoutes.cancel(id));
  }

  /** Answers a pending permission request (the oldest unless `requestId` names one); 409 when none is pending. */
  approve(id: string, answer: ApproveRequest = {}): Promise<ApproveResult> {
    return this.#t.json('POST', apiRoutes.approve(id), ApproveResultSchema, { body: answer });
  }

  /**
   * One page of the agent's typed events from `from` (409 for a raw agent). `wait` (ms, at most
   * 20000): with no event from `from` yet, the server answers as soon as there is one, or the agent
   * exits, at the latest after `wait`.
   */
  events(id: string, opts: { from?: number; limit?: number; wait?: number; signal?: AbortSignal } = {}): Promise<AgentEventPage> {
    const q = new URLSearchParams();
    if (opts.from !== undefined) q.set('from', String(opts.from));
    if (opts.limit !== undefined) q.set('limit', String(opts.limit));
    if (opts.wait !== undefined) q.set('wait', String(opts.wait));
    const qs = q.size > 0 ? `?${q.toString()}` : '';
    return this.#t.json('GET', `${apiRoutes.agentEvents(id)}${qs}`, AgentEventPageSchema, { signal: opts.signal });
  }
}
