/**
 * The request pipeline shared by the control and instance servers: route match, authentication,
 * handler, and one place where thrown errors become protocol error responses.
 * @module
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { HttpError } from '../errors.js';
import { sendError, sendJson, sendNoContent, toHttpError } from './respond.js';
import type { Params, Router } from './router.js';

export interface RequestContext {
  readonly req: IncomingMessage;
  readonly params: Params;
  readonly query: URLSearchParams;
}

/** What a handler returns: a status and a JSON body (`undefined` body → 204 No Content). */
export interface Reply {
  readonly status: number;
  readonly body?: unknown;
}

export type Handler = (ctx: RequestContext) => Promise<Reply> | Reply;

export interface Route {
  readonly handler: Handler;
  /** Routes reachable without a bearer token (control `/health` and `/auth/handshake`). */
  readonly public?: boolean;
}

/** Throws an `HttpError` (401/403) when the request may not proceed. */
export type Authenticate = (req: IncomingMessage) => void;

/** Parses the request target; the host part is irrelevant, only path and query are used. */
export function parseTarget(req: IncomingMessage): URL {
  try {
    return new URL(req.url ?? '/', 'http://127.0.0.1');
  } catch {
    throw new HttpError('bad_request', 'malformed request target');
  }
}

/** Builds a `node:http` request listener over `router`. */
export function createRequestListener(router: Router<Route>, authenticate: Authenticate, log: Logger): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const started = process.hrtime.bigint();
    void handle(router, authenticate, req, res, log).then(() => {
      if (log.isLevelEnabled('debug')) {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        // Only method, path and status: headers (tokens) and bodies are never logged.
        log.debug({ method: req.method, path: req.url?.split('?')[0], status: res.statusCode, ms }, 'request');
      }
    });
  };
}

async function handle(
  router: Router<Route>,
  authenticate: Authenticate,
  req: IncomingMessage,
  res: ServerResponse,
  log: Logger,
): Promise<void> {
  try {
    const url = parseTarget(req);
    const match = router.match(req.method ?? 'GET', url.pathname);
    if (match.kind === 'bad_path') throw new HttpError('bad_request', 'malformed percent-encoding in path');
    if (match.kind !== 'found') {
      // Authenticate first so unauthenticated callers cannot map the API surface.
      authenticate(req);
      if (match.kind === 'not_found') throw new HttpError('not_found', `no route for ${url.pathname}`);
      res.setHeader('allow', match.allowed.join(', '));
      throw new HttpError('method_not_allowed', `method ${req.method} is not allowed on ${url.pathname}`);
    }
    if (match.handler.public !== true) authenticate(req);
    const reply = await match.handler.handler({ req, params: match.params, query: url.searchParams });
    if (reply.body === undefined) sendNoContent(res);
    else sendJson(res, reply.status, reply.body);
  } catch (err) {
    const httpError = toHttpError(err);
    if (httpError.status >= 500) log.error({ err: httpError.cause ?? httpError, path: req.url?.split('?')[0] }, 'request failed');
    if (httpError.code === 'body_too_large' || !req.complete) res.setHeader('connection', 'close');
    sendError(res, httpError);
  }
}
