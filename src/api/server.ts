/**
 * The Berth HTTP API: a thin node:http shell over a `SessionService`. JSON requests and responses,
 * bearer-token auth, SSE for events, NDJSON for logs and exec; the shell WebSocket is in
 * `shell-route.ts`. Binding, the token file and the single-writer lock live in `serve.ts`.
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { SessionEvent, SessionService } from '../controller/service.js';
import { HttpError, toErrorResponse } from './error-response.js';
import { bearerToken, queryFlag, queryInt, readJson, sendError, sendJson, toWire, tokenMatches } from './http-util.js';
import { generateOpenApi } from './openapi.js';
import { matchRoute, type Operation } from './routes.js';
import { ExecRequestSchema, LaunchRequestSchema, type ExecMessage, type LogMessage } from './schemas.js';
import { attachShellRoute } from './shell-route.js';

/** The logging the server needs (a pino logger fits). */
export interface ApiLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface ApiServerOptions {
  service: SessionService;
  /** The bearer token every route but /health requires. */
  token: string;
  version: string;
  logger?: ApiLogger;
  /** @default 15000 */
  keepAliveMs?: number;
}

const MAX_BODY = 1 << 20;
const MAX_EXEC_BODY = 16 << 20;

interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  id: string;
}

/** Aborted once the response's connection closes (the client left, or the response ended). */
function clientGone(res: ServerResponse): AbortSignal {
  const ctl = new AbortController();
  if (res.destroyed) ctl.abort();
  else res.once('close', () => ctl.abort());
  return ctl.signal;
}

/** Creates (does not bind) the API server. */
export function createApiServer(opts: ApiServerOptions): Server {
  const { service, token, version } = opts;
  const keepAliveMs = opts.keepAliveMs ?? 15_000;
  const log = opts.logger;
  const openapi = generateOpenApi(version);

  const handlers: Record<Exclude<Operation, 'health' | 'openapi' | 'launch' | 'list' | 'shell'>, (ctx: Ctx) => Promise<void>> = {
    get: async ({ res, id }) => sendJson(res, 200, await service.get(id)),
    stop: async ({ res, id }) => sendJson(res, 200, await service.stop(id)),
    resume: async ({ res, id }) => sendJson(res, 200, await service.resume(id)),
    remove: async ({ res, url, id }) => {
      await service.remove(id, { force: queryFlag(url, 'force') });
      res.writeHead(204).end();
    },
    events: (ctx) => streamEvents(ctx),
    logs: (ctx) => streamLogs(ctx),
    exec: (ctx) => runExec(ctx),
  };

  async function streamEvents({ res, id }: Ctx): Promise<void> {
    // Watch for the client leaving from the start: it may go while the snapshot is being read.
    const gone = clientGone(res);
    // Subscribe before reading the snapshot so nothing between the two is lost; buffered events
    // are replayed after the snapshot (a stage may then appear twice, in order — harmless).
    const buffered: SessionEvent[] = [];
    let live = false;
    const write = (e: SessionEvent): void => {
      if (res.destroyed || res.writableEnded) return;
      res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    };
    const unsubscribe = service.subscribe(
      (e) => {
        if (live) write(e);
        else buffered.push(e);
      },
      { sessionId: id },
    );
    try {
      const view = await service.get(id);
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
      const at = new Date().toISOString();
      // Stages before the state: a reader that stops at a final state has seen every stage.
      for (const stage of view.stages) write({ type: 'stage', sessionId: id, stage, at });
      write({ type: 'state', sessionId: id, state: view.state, error: view.error, at });
      for (const e of buffered) write(e);
      live = true;
    } catch (err) {
      unsubscribe();
      throw err;
    }
    if (gone.aborted) {
      unsubscribe();
      return;
    }
    const ping = setInterval(() => {
      if (!res.destroyed && !res.writableEnded) res.write(': ping\n\n');
    }, keepAliveMs);
    ping.unref();
    await new Promise<void>((resolve) => {
      gone.addEventListener(
        'abort',
        () => {
          clearInterval(ping);
          unsubscribe();
          resolve();
        },
        { once: true },
      );
    });
  }

  async function streamLogs({ res, url, id }: Ctx): Promise<void> {
    const from = queryInt(url, 'from');
    const follow = queryFlag(url, 'follow');
    const previous = queryFlag(url, 'previous');
    // Registered before the first await: the client may leave while the session is looked up.
    const gone = clientGone(res);
    await service.get(id); // a clean 404 before the stream starts
    if (gone.aborted) return;
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
    const line = (m: LogMessage): void => {
      if (res.destroyed || res.writableEnded) return;
      res.write(`${JSON.stringify(m)}\n`);
    };
    const ping = setInterval(() => line({ type: 'ping' }), keepAliveMs);
    ping.unref();
    try {
      for await (const chunk of service.logs(id, { ...(from !== undefined ? { from } : {}), follow, ...(previous ? { previous } : {}), signal: gone })) {
        if (gone.aborted) break;
        line({ type: 'output', chunk: toWire(chunk) });
      }
      if (!gone.aborted) line({ type: 'end' });
    } catch (err) {
      if (!gone.aborted) line({ type: 'error', error: toErrorResponse(err).body.error });
    } finally {
      clearInterval(ping);
    }
    if (!res.destroyed) res.end();
  }

  async function runExec({ req, res, id }: Ctx): Promise<void> {
    const body = await readJson(req, ExecRequestSchema, MAX_EXEC_BODY);
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    // Headers go out with the first output (or the exit), so a refused exec still gets its real status.
    const start = (): void => {
      if (!res.headersSent) res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
    };
    const line = (m: ExecMessage): void => {
      // The client may have gone (Ctrl-C): a write after that would be an 'error' on the response.
      if (res.destroyed || res.writableEnded) return;
      start();
      res.write(`${JSON.stringify(m)}\n`);
    };
    // A quiet command still gets headers and keep-alives (HTTP clients time out silent responses;
    // a refused exec fails long before the first ping).
    const ping = setInterval(() => line({ type: 'ping' }), keepAliveMs);
    ping.unref();
    let result: { exitCode: number | null; signal: string | null };
    try {
      result = await service.exec(id, body.argv, {
        ...(body.cwd !== undefined ? { cwd: body.cwd } : {}),
        ...(body.env !== undefined ? { env: body.env } : {}),
        ...(body.stdin !== undefined ? { stdin: Buffer.from(body.stdin, 'base64') } : {}),
        signal: abort.signal,
        onOutput: (chunk) => line({ type: 'output', chunk: toWire(chunk) }),
      });
    } catch (err) {
      if (!res.headersSent) throw err;
      line({ type: 'error', error: toErrorResponse(err).body.error });
      if (!res.destroyed) res.end();
      return;
    } finally {
      clearInterval(ping);
    }
    line({ type: 'exit', exitCode: result.exitCode, signal: result.signal });
    if (!res.destroyed) res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const match = matchRoute(req.method ?? 'GET', url.pathname);
    if ('error' in match) {
      throw new HttpError(match.error, match.error === 'not_found' ? `no route ${url.pathname}` : `${req.method} not allowed on ${url.pathname}`);
    }
    if (match.auth && !tokenMatches(bearerToken(req), token)) {
      throw new HttpError('unauthorized', 'missing or wrong bearer token (it is in <dataDir>/api-token)');
    }
    switch (match.operation) {
      case 'health':
        return sendJson(res, 200, { status: 'ok', version });
      case 'openapi':
        return sendJson(res, 200, openapi);
      case 'launch': {
        const body = await readJson(req, LaunchRequestSchema, MAX_BODY);
        return sendJson(res, 202, await service.launch(body));
      }
      case 'list':
        return sendJson(res, 200, { sessions: await service.list() });
      case 'shell':
        throw new HttpError('bad_request', 'the shell route needs a WebSocket upgrade');
      default:
        return handlers[match.operation]({ req, res, url, id: match.id ?? '' });
    }
  }

  const server = createServer((req, res) => {
    const started = Date.now();
    handle(req, res).then(
      () => log?.info({ method: req.method, path: req.url?.split('?')[0], status: res.statusCode, ms: Date.now() - started }, 'request'),
      (err: unknown) => {
        const { status, message } = sendError(res, err);
        const entry = { method: req.method, path: req.url?.split('?')[0], status, error: message };
        if (status >= 500) log?.error({ ...entry, err }, 'request failed');
        else log?.info(entry, 'request');
      },
    );
  });
  attachShellRoute(server, { service, token });
  return server;
}
