/**
 * The request pipeline of the control and instance servers, on the shared HTTP kit: route match,
 * authentication (before a 404 or 405 too, so strangers cannot map the routes), then a handler
 * that returns its reply; whatever is thrown becomes a protocol error response.
 * @module
 */
import type { IncomingMessage, RequestListener } from 'node:http';
import type { Logger } from 'pino';
import { createRequestListener as kitListener, routeRequest, sendJson, sendNoContent, type Params, type Router } from '../../shared/http/index.js';
import { toHttpError } from './respond.js';

interface RequestContext {
  readonly req: IncomingMessage;
  readonly params: Params;
  readonly query: URLSearchParams;
}

/** What a handler returns: a status and a JSON body (`undefined` body → 204 No Content). */
interface Reply {
  readonly status: number;
  readonly body?: unknown;
}

type Handler = (ctx: RequestContext) => Promise<Reply> | Reply;

export interface Route {
  readonly handler: Handler;
  /** Routes reachable without a bearer token (control `/health` and `/auth/handshake`). */
  readonly public?: boolean;
}

/** Throws an `HttpError` (401/403) when the request may not proceed. */
type Authenticate = (req: IncomingMessage) => void;

/** Builds a `node:http` request listener over `router`. */
export function createRequestListener(router: Router<Route>, authenticate: Authenticate, log: Logger): RequestListener {
  return kitListener({
    handle: async (req, res) => {
      const { handler: route, params, url } = routeRequest(router, req, res, () => authenticate(req));
      if (route.public !== true) authenticate(req);
      const reply = await route.handler({ req, params, query: url.searchParams });
      if (reply.body === undefined) sendNoContent(res);
      else sendJson(res, reply.status, reply.body);
    },
    toHttpError,
    onDone: ({ method, path, status, ms, error }) => {
      if (error !== undefined && status >= 500) log.error({ err: error.cause ?? error, path }, 'request failed');
      // Only method, path and status: headers (tokens) and bodies are never logged.
      if (log.isLevelEnabled('debug')) log.debug({ method, path, status, ms }, 'request');
    },
  });
}
