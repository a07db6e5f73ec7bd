/**
 * The Berth HTTP API: a thin node:http shell over a `SessionService`. JSON requests and responses,
 * bearer-token or dashboard-cookie auth (with the Host, Origin and CSRF checks of `dashboard/`),
 * SSE for events, NDJSON for logs and exec, and the built web app on every other GET; the shell
 * WebSocket is in `shell-route.ts`. Binding, the token file and the single-writer lock live in `serve.ts`.
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SessionEvent, SessionService, SessionWorkspaceService } from '../controller/service.js';
import { outlastClients } from '../shared/keep-alive.js';
import { streamAllEvents, streamSessionEvents } from './all-events.js';
import { DashboardAuth } from './dashboard/auth.js';
import { Gate, type Caller } from './dashboard/gate.js';
import { allowedHosts } from './dashboard/guard.js';
import { handleDashboard } from './dashboard/handlers.js';
import { serveStatic } from './dashboard/static.js';
import { writeLine } from './backpressure.js';
import { HttpError, toErrorResponse } from './error-response.js';
import { queryFlag, queryInt, readJson, sendError, sendJson, toWire } from './http-util.js';
import { generateOpenApi } from '../api/openapi.js';
import { matchRoute, type Operation } from '../api/routes.js';
import { ExecRequestSchema, InputRequestSchema, LaunchRequestSchema, type ExecMessage, type LaunchOptions, type LogMessage } from '../api/schemas.js';
import { resolveSessionRef } from './session-ref.js';
import { attachShellRoute } from './shell-route.js';

/** The logging the server needs (a pino logger fits). */
export interface ApiLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** What the server serves: the session service, and the agent's stdin where the service offers it. */
export type ApiService = SessionService & Partial<Pick<SessionWorkspaceService, 'sendInput'>>;

export interface ApiServerOptions {
  service: ApiService;
  /** The bearer token every route but /health requires. */
  token: string;
  version: string;
  logger?: ApiLogger;
  /** @default 15000 */
  keepAliveMs?: number;
  /** sha256 of the config file the service runs with (null: built-in defaults), shown by /health for `berth doctor`. */
  configSha256?: string | null;
  /** The built web app (`dist/web`) served on every non-API path (503 naming `npm run build` while it has no index.html); absent: 404. */
  webRoot?: string;
  /** The address `berth serve --host` binds besides loopback names: accepted in the Host header too. */
  host?: string;
  /** What `GET /api/v1/launch-options` answers (from the config); absent: 501. */
  launchOptions?: LaunchOptions;
  /** The dashboard's login codes and cookie sessions. @default a fresh one (in memory) */
  dashboardAuth?: DashboardAuth;
}

const MAX_BODY = 1 << 20;
/** Above the prompt and env limits, so an over-limit launch is refused naming the field and its limit. */
const MAX_LAUNCH_BODY = 4 << 20;
const MAX_EXEC_BODY = 16 << 20;

interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  id: string;
}

/** Operations the switch in `handle` answers itself (no session id). */
type OwnOperation = 'health' | 'openapi' | 'launch' | 'list' | 'shell' | 'allEvents' | 'launchOptions' | `dashboard${'Codes' | 'Login' | 'Session' | 'Logout'}`;

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
  const auth = opts.dashboardAuth ?? new DashboardAuth();
  const openapi = generateOpenApi(version, { cookieName: auth.cookieName });
  let hosts: string[] | undefined;
  const gate = new Gate({
    token,
    auth,
    hosts: () => {
      if (hosts) return hosts;
      const port = (server.address() as AddressInfo | null)?.port ?? 0;
      const list = allowedHosts(port, opts.host);
      if (port > 0) hosts = list;
      return list;
    },
  });

  const handlers: Record<Exclude<Operation, OwnOperation>, (ctx: Ctx) => Promise<void>> = {
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
    input: async ({ req, res, id }) => {
      const body = await readJson(req, InputRequestSchema, MAX_BODY + 1024);
      if (!service.sendInput) throw new HttpError('not_implemented', 'this server cannot send input to agents');
      await service.sendInput(id, body.data, { eof: body.eof ?? false });
      res.writeHead(204).end();
    },
  };

  function streamEvents({ res, id }: Ctx): Promise<void> {
    return streamSessionEvents(service, res, {
      keepAliveMs,
      sessionId: id,
      snapshot: async () => {
        const view = await service.get(id);
        const at = new Date().toISOString();
        // Stages before the state: a reader that stops at a final state has seen every stage.
        return [...view.stages.map((stage): SessionEvent => ({ type: 'stage', sessionId: id, stage, at })), { type: 'state', sessionId: id, state: view.state, error: view.error, at }];
      },
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
    // Sent now, not with the first output: a quiet agent's follower must not wait for a ping to start.
    res.flushHeaders();
    // Each line waits for a full response buffer to drain before the next chunk is pulled: a
    // follower that stops reading pauses the stream back to agentctl, not a growing buffer here.
    const line = (m: LogMessage): Promise<void> => writeLine(res, `${JSON.stringify(m)}\n`);
    // A stalled client needs no keep-alive (and must not get an unbounded pile of them).
    const ping = setInterval(() => {
      if (!res.writableNeedDrain) void line({ type: 'ping' });
    }, keepAliveMs);
    ping.unref();
    try {
      for await (const chunk of service.logs(id, { ...(from !== undefined ? { from } : {}), follow, ...(previous ? { previous } : {}), signal: gone })) {
        if (gone.aborted) break;
        await line({ type: 'output', chunk: toWire(chunk) });
      }
      if (!gone.aborted) void line({ type: 'end' });
    } catch (err) {
      if (!gone.aborted) void line({ type: 'error', error: toErrorResponse(err).body.error });
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
    const line = (m: ExecMessage): Promise<void> => {
      // The client may have gone (Ctrl-C): a write after that would be an 'error' on the response.
      if (res.destroyed || res.writableEnded) return Promise.resolve();
      start();
      // Resolves once a full buffer drained: the service awaits it before it takes more output.
      return writeLine(res, `${JSON.stringify(m)}\n`);
    };
    // A quiet command still gets headers and keep-alives (HTTP clients time out silent responses;
    // a refused exec fails long before the first ping). A stalled client gets none.
    const ping = setInterval(() => {
      if (!res.writableNeedDrain) void line({ type: 'ping' });
    }, keepAliveMs);
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
      void line({ type: 'error', error: toErrorResponse(err).body.error });
      if (!res.destroyed) res.end();
      return;
    } finally {
      clearInterval(ping);
    }
    void line({ type: 'exit', exitCode: result.exitCode, signal: result.signal });
    if (!res.destroyed) res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    gate.checkHost(req);
    const isApi = url.pathname === '/health' || url.pathname === '/api' || url.pathname.startsWith('/api/');
    if (!isApi && (req.method === 'GET' || req.method === 'HEAD')) {
      if (opts.webRoot === undefined) throw new HttpError('not_found', 'this server has no dashboard (no web root)');
      return serveStatic(opts.webRoot, url.pathname, res, { headOnly: req.method === 'HEAD' });
    }
    const match = matchRoute(req.method ?? 'GET', url.pathname);
    if ('error' in match) {
      throw new HttpError(match.error, match.error === 'not_found' ? `no route ${url.pathname}` : `${req.method} not allowed on ${url.pathname}`);
    }
    const caller: Caller | null = match.auth ? gate.authenticate(req) : null;
    switch (match.operation) {
      case 'health':
        return sendJson(res, 200, { status: 'ok', version, ...(opts.configSha256 !== undefined ? { configSha256: opts.configSha256 } : {}) });
      case 'openapi':
        return sendJson(res, 200, openapi);
      case 'launch': {
        const body = await readJson(req, LaunchRequestSchema, MAX_LAUNCH_BODY);
        return sendJson(res, 202, await service.launch(body));
      }
      case 'list':
        return sendJson(res, 200, { sessions: await service.list() });
      case 'shell':
        throw new HttpError('bad_request', 'the shell route needs a WebSocket upgrade');
      case 'allEvents':
        return streamAllEvents(service, res, keepAliveMs);
      case 'launchOptions':
        if (!opts.launchOptions) throw new HttpError('not_implemented', 'this server has no launch options (no config)');
        return sendJson(res, 200, opts.launchOptions);
      case 'dashboardCodes':
      case 'dashboardLogin':
      case 'dashboardSession':
      case 'dashboardLogout':
        return handleDashboard(match.operation, { req, res, auth, gate, caller });
      default:
        return handlers[match.operation]({ req, res, url, id: await resolveSessionRef(service, match.id ?? '') });
    }
  }

  const server = outlastClients(createServer((req, res) => {
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
  }));
  attachShellRoute(server, { service, gate, ...(log ? { log } : {}) });
  return server;
}
