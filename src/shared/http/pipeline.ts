/**
 * The request pipeline of both servers: the request target, the route (400 for a malformed target
 * or percent-encoding, 404, 405 with `Allow`), and one place where whatever a request throws
 * becomes an error response. What runs in between (host checks, authentication, the handler) is
 * the server's.
 * @module
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { HttpError } from './errors.js';
import { sendError } from './respond.js';
import type { Params, Router } from './router.js';

/** Parses the request target; the host part is irrelevant, only path and query are used. */
export function parseTarget(req: IncomingMessage): URL {
  try {
    return new URL(req.url ?? '/', 'http://127.0.0.1');
  } catch {
    throw new HttpError('bad_request', 'malformed request target');
  }
}

interface Routed<H> {
  readonly handler: H;
  readonly params: Params;
  readonly url: URL;
}

/**
 * The route of `req`, or an HttpError: 400 (malformed target or percent-encoding), 404, or 405
 * (with the `Allow` header set on `res`). `beforeMiss` runs before a 404 or 405 is thrown — a
 * server that hides its routes from strangers authenticates there.
 */
export function routeRequest<H>(router: Router<H>, req: IncomingMessage, res: ServerResponse, beforeMiss?: () => void): Routed<H> {
  const url = parseTarget(req);
  const match = router.match(req.method ?? 'GET', url.pathname);
  if (match.kind === 'found') return { handler: match.handler, params: match.params, url };
  if (match.kind === 'bad_path') throw new HttpError('bad_request', 'malformed percent-encoding in path');
  beforeMiss?.();
  if (match.kind === 'not_found') throw new HttpError('not_found', `no route for ${url.pathname}`);
  res.setHeader('allow', match.allowed.join(', '));
  throw new HttpError('method_not_allowed', `method ${req.method} is not allowed on ${url.pathname}`);
}

/** What the pipeline tells about each answered request: never headers, query strings or bodies. */
export interface RequestOutcome {
  readonly method: string | undefined;
  /** The path without its query (which may carry tokens). */
  readonly path: string | undefined;
  /** The status answered (an error's, even when the response had started and was cut instead). */
  readonly status: number;
  readonly ms: number;
  /** The error the request was answered with, if any. */
  readonly error?: HttpError;
}

interface RequestListenerOptions {
  /** Answers one request: writes the response, or throws. */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** The HttpError a thrown value is answered with (the server's mapping and redaction). */
  readonly toHttpError: (err: unknown) => HttpError;
  /** Told once per request, after its answer (or its error) was written. */
  readonly onDone?: (outcome: RequestOutcome) => void;
}

/**
 * A `node:http` request listener around `handle`. A request answered with an error while its
 * body was not read to the end (a 413, a bad target) closes the connection: the rest of the
 * body must not be taken for the next request.
 */
export function createRequestListener(opts: RequestListenerOptions): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    const done = (error?: HttpError): void => {
      const outcome = { method: req.method, path: req.url?.split('?')[0], ms: performance.now() - started };
      opts.onDone?.(error === undefined ? { ...outcome, status: res.statusCode } : { ...outcome, status: error.status, error });
    };
    opts.handle(req, res).then(
      () => done(),
      (err: unknown) => {
        const error = opts.toHttpError(err);
        if (!res.headersSent && (error.code === 'body_too_large' || !req.complete)) res.setHeader('connection', 'close');
        sendError(res, error);
        done(error);
      },
    );
  };
}
