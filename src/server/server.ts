/**
 * The Berth HTTP API: a thin node:http shell over a `SessionService`, built on the shared HTTP
 * kit. Every request passes the Host check; non-API GETs get the built web app; API requests are
 * routed by the route table (`api/routes.ts`), authenticated with the bearer token or the
 * dashboard cookie (the checks of `dashboard/`) and answered by the route modules in `routes/`:
 * JSON, SSE for events, NDJSON for logs and exec. The shell WebSocket is in `shell-route.ts`;
 * binding, the token file and the single-writer lock live in `serve.ts`.
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROUTE_TABLE, type LaunchOptions, type Operation } from '../api/index.js';
import { createRequestListener, HttpError, parseTarget, routeRequest, Router, type RequestOutcome } from '../shared/http/index.js';
import { outlastClients } from '../shared/keep-alive.js';
import { DashboardAuth } from './dashboard/auth.js';
import { Gate } from './dashboard/gate.js';
import { allowedHosts } from './dashboard/guard.js';
import { serveStatic } from './dashboard/static.js';
import { toHttpError } from './error-response.js';
import { conversationRoutes } from './routes/conversation.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { metaRoutes } from './routes/meta.js';
import { sessionRoutes } from './routes/sessions.js';
import { streamRoutes } from './routes/streams.js';
import type { ApiHandler, ApiHandlers, ApiService } from './routes/types.js';
import { workspaceRoutes } from './routes/workspace.js';
import { attachShellRoute } from './shell-route.js';

export type { ApiService } from './routes/types.js';

/** The logging the server needs (a pino logger fits). */
export interface ApiLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

interface ApiServerOptions {
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

interface ApiRoute {
  /** Whether the caller must authenticate (all but /health and the dashboard login). */
  readonly auth: boolean;
  readonly handler: ApiHandler;
}

/** The route table on the kit's router, each operation with its handler. */
function apiRouter(handlers: ApiHandlers<Operation>): Router<ApiRoute> {
  const router = new Router<ApiRoute>();
  for (const route of ROUTE_TABLE) router.add(route.method, route.path.replace('{id}', ':id'), { auth: route.auth, handler: handlers[route.operation] });
  return router;
}

const isApiPath = (path: string): boolean => path === '/health' || path === '/api' || path.startsWith('/api/');

/** The request log: method, path (never the query), status and time; an unexpected error with its stack. */
function requestLogger(log: ApiLogger | undefined): (outcome: RequestOutcome) => void {
  return ({ method, path, status, ms, error }) => {
    if (error === undefined) log?.info({ method, path, status, ms }, 'request');
    else if (status >= 500) log?.error({ method, path, status, error: error.message, err: error.cause ?? error }, 'request failed');
    else log?.info({ method, path, status, error: error.message }, 'request');
  };
}

/** Creates (does not bind) the API server. */
export function createApiServer(opts: ApiServerOptions): Server {
  const { service } = opts;
  const keepAliveMs = opts.keepAliveMs ?? 15_000;
  const auth = opts.dashboardAuth ?? new DashboardAuth();
  let hosts: string[] | undefined;
  const gate = new Gate({
    token: opts.token,
    auth,
    hosts: () => {
      if (hosts) return hosts;
      const port = (server.address() as AddressInfo | null)?.port ?? 0;
      const list = allowedHosts(port, opts.host);
      if (port > 0) hosts = list;
      return list;
    },
  });
  const router = apiRouter({
    ...metaRoutes({ version: opts.version, cookieName: auth.cookieName, configSha256: opts.configSha256, launchOptions: opts.launchOptions }),
    ...sessionRoutes(service),
    ...streamRoutes({ service, keepAliveMs }),
    ...workspaceRoutes({ service, keepAliveMs }),
    ...conversationRoutes(service),
    ...dashboardRoutes(auth, gate),
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    gate.checkHost(req);
    const url = parseTarget(req);
    if (!isApiPath(url.pathname) && (req.method === 'GET' || req.method === 'HEAD')) {
      if (opts.webRoot === undefined) throw new HttpError('not_found', 'this server has no dashboard (no web root)');
      return serveStatic(opts.webRoot, url.pathname, res, { headOnly: req.method === 'HEAD' });
    }
    // An unknown route is told as such (404/405) before any authentication.
    const { handler: route, params } = routeRequest(router, req, res);
    const caller = route.auth ? gate.authenticate(req) : null;
    await route.handler({ req, res, url, params, caller });
  }

  const server = outlastClients(createServer(createRequestListener({ handle, toHttpError, onDone: requestLogger(opts.logger) })));
  attachShellRoute(server, { service, gate, ...(opts.logger ? { log: opts.logger } : {}) });
  return server;
}
