/**
 * What the API's route modules share: the request context a handler gets, the handler table (one
 * handler per operation of the route table) and the session-ref step of the routes that take an id.
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Operation } from '../../api/index.js';
import type { SessionConversationService, SessionPoolService, SessionService, SessionWorkspaceService } from '../../controller/index.js';
import type { Params } from '../../shared/http/index.js';
import type { Caller } from '../dashboard/gate.js';
import { resolveSessionRef } from '../session-ref.js';

/** What the server serves: the session service, and the agent's stdin, ACP conversation, warm pools and egress records where the service offers them. */
export type ApiService = SessionService & Partial<Pick<SessionWorkspaceService, 'sendInput' | 'egress'>> & Partial<SessionConversationService> & Partial<SessionPoolService>;

interface ApiContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly params: Params;
  /** Who called (null on the routes open to anyone). */
  readonly caller: Caller | null;
}

/** Answers one request: writes the response (or throws an error the pipeline answers). */
export type ApiHandler = (ctx: ApiContext) => Promise<void> | void;

/** A handler for each operation in `ops`. */
export type ApiHandlers<O extends Operation> = Readonly<Record<O, ApiHandler>>;

/**
 * A handler of a route that takes a session id: `{id}` (an id or a unique name) is resolved to
 * the session's id first, so the service only ever sees ids.
 */
export function withSession(service: ApiService, handler: (ctx: ApiContext, id: string) => Promise<void>): ApiHandler {
  return async (ctx) => handler(ctx, await resolveSessionRef(service, ctx.params['id'] ?? ''));
}

/** Aborted once the response's connection closes (the client left, or the response ended). */
export function clientGone(res: ServerResponse): AbortSignal {
  const ctl = new AbortController();
  if (res.destroyed) ctl.abort();
  else res.once('close', () => ctl.abort());
  return ctl.signal;
}
