/**
 * The Berth HTTP API: a thin node:http shell over a `SessionService`, built on the shared HTTP
 * kit. Every request passes the Host check; non-API GETs get the built web app; API requests are
 * routed by the route table (`api/routes.ts`), authenticated with the bearer token or the
 * dashboard cookie (the checks of `dashboard/`) and answered by the route modules in `routes/`:
 * JSON, SSE for events, NDJSON for logs and exec. The probes (`/healthz`, `/readyz`) and
 * `/metrics` skip the Host check and the token (a kubelet or Prometheus names the Pod's address and
 * has no token), and answer while the controller starts: the routes that need the service answer
 * 503 until it is there. The shell WebSocket is in `shell-route.ts`; binding, the token file and
 * the single-writer lock live in `serve.ts`.
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { ROUTE_TABLE, type ApiErrorCode, type LaunchOptions, type Operation } from '../api/index.js';
import { createRequestListener, HttpError, parseTarget, routeRequest, Router, type RequestOutcome } from '../shared/http/index.js';
import { outlastClients } from '../shared/keep-alive.js';
import { DashboardAuth } from './dashboard/auth.js';
import { Gate } from './dashboard/gate.js';
import { allowedHosts } from './dashboard/guard.js';
import { serveStatic } from './dashboard/static.js';
import { toHttpError } from './error-response.js';
import { Readiness } from './health.js';
import type { ServerMetrics } from './metrics.js';
import { conversationRoutes } from './routes/conversation.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { egressRoutes } from './routes/egress.js';
import { metaRoutes } from './routes/meta.js';
import { probeRoutes } from './routes/probes.js';
import { poolRoutes } from './routes/pools.js';
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
  /**
   * The session service; a promise while the controller starts (the routes that need it answer
   * 503 until it settles, the probes and /metrics answer already).
   */
  service: ApiService | Promise<ApiService>;
  /** The bearer token every route but /health requires. */
  token: string;
  version: string;
  logger?: ApiLogger;
  /** How often a quiet stream (logs, exec, events) sends a keep-alive and an open shell WebSocket is pinged. @default 15000 */
  keepAliveMs?: number;
  /** sha256 of the config file the service runs with (null: built-in defaults), shown by /health for `berth doctor`. */
  configSha256?: string | null;
  /** The built web app (`dist/web`) served on every non-API path (503 naming `npm run build` while it has no index.html); absent: 404. */
  webRoot?: string;
  /** The address `berth serve --host` binds besides loopback names: accepted in the Host header too. */
  host?: string;
  /** Names a Service or Ingress gives the server (`--public-host`): accepted in the Host header with any port. */
  publicHosts?: readonly string[];
  /**
   * Whether the dashboard cookie is `Secure` and an `https://` Origin is the server's own: TLS here
   * or at a proxy in front (an Ingress). @default whether `tls` is set
   */
  secureCookie?: boolean;
  /** What `GET /api/v1/launch-options` answers (from the config); absent: 501. */
  launchOptions?: LaunchOptions;
  /** The dashboard's login codes and cookie sessions. @default a fresh one (in memory) */
  dashboardAuth?: DashboardAuth;
  /** Serve HTTPS with this certificate chain and key (PEM) instead of plain HTTP. */
  tls?: { cert: string; key: string };
  /** What `/readyz` answers (the caller flips it). @default one of its own, ready once the service is there */
  readiness?: Readiness;
  /** What `/metrics` serves; every request's duration is observed there. Absent: `/metrics` answers 501. */
  metrics?: ServerMetrics;
  /** Whether `/metrics` needs the token and the Host check like the API routes. @default false */
  metricsAuth?: boolean;
}

/** The paths answered without the Host check (the kubelet names the Pod's IP in Host); `/metrics` too unless it needs the token. */
const PROBE_PATHS = new Set(['/healthz', '/readyz']);
const METRICS_PATH = '/metrics';

interface ApiRoute {
  /** Whether the caller must authenticate (all but /health and the dashboard login). */
  readonly auth: boolean;
  readonly handler: ApiHandler;
}

/**
 * The route table on the kit's router, each operation with its handler: `fixed` ones, else the
 * one `served()` has once the service is there, else `starting`.
 */
function apiRouter(
  fixed: Partial<ApiHandlers<Operation>>,
  served: () => Partial<ApiHandlers<Operation>>,
  starting: ApiHandler,
  metricsAuth: boolean,
): Router<ApiRoute> {
  const router = new Router<ApiRoute>();
  for (const route of ROUTE_TABLE) {
    const op = route.operation;
    const handler: ApiHandler = fixed[op] ?? ((ctx) => (served()[op] ?? starting)(ctx));
    router.add(route.method, route.path.replace('{id}', ':id'), { auth: route.auth || (op === 'metrics' && metricsAuth), handler });
  }
  return router;
}

const isApiPath = (path: string): boolean => path === '/health' || PROBE_PATHS.has(path) || path === METRICS_PATH || path === '/api' || path.startsWith('/api/');

/** The request log: method, path (never the query), status and time; an unexpected error with its stack. Answered probes are not logged. */
function requestLogger(log: ApiLogger | undefined): (outcome: RequestOutcome) => void {
  return ({ method, path, status, ms, error }) => {
    if (status < 400 && path !== undefined && (PROBE_PATHS.has(path) || path === METRICS_PATH)) return;
    if (error === undefined) log?.info({ method, path, status, ms }, 'request');
    else if (status >= 500) log?.error({ method, path, status, error: error.message, err: error.cause ?? error }, 'request failed');
    else log?.info({ method, path, status, error: error.message }, 'request');
  };
}

/** Creates (does not bind) the API server. */
export function createApiServer(opts: ApiServerOptions): Server {
  const keepAliveMs = opts.keepAliveMs ?? 15_000;
  const secure = opts.secureCookie ?? opts.tls !== undefined;
  const auth = opts.dashboardAuth ?? new DashboardAuth({ secure });
  const readiness = opts.readiness ?? new Readiness();
  const metricsAuth = opts.metricsAuth ?? false;
  let hosts: string[] | undefined;
  const gate = new Gate({
    token: opts.token,
    auth,
    // Served over TLS: https only; TLS at a proxy in front: https there, http through a port-forward.
    originSchemes: opts.tls ? ['https'] : secure ? ['http', 'https'] : ['http'],
    hosts: () => {
      if (hosts) return hosts;
      const port = (server.address() as AddressInfo | null)?.port ?? 0;
      const list = allowedHosts(port, opts.host, opts.publicHosts);
      if (port > 0) hosts = list;
      return list;
    },
  });
  let served: Partial<ApiHandlers<Operation>> = {};
  const starting: ApiHandler = () => {
    const state = readiness.state;
    throw new HttpError<ApiErrorCode>('internal', `berth serve is not ready: ${state.ready ? 'starting' : state.message}; try again shortly`, { status: 503 });
  };
  const router = apiRouter(
    {
      ...metaRoutes({ version: opts.version, cookieName: auth.cookieName, configSha256: opts.configSha256, launchOptions: opts.launchOptions }),
      ...dashboardRoutes(auth, gate),
      ...probeRoutes({ readiness, ...(opts.metrics ? { metrics: opts.metrics } : {}) }),
    },
    () => served,
    starting,
    metricsAuth,
  );

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = parseTarget(req);
    const open = PROBE_PATHS.has(url.pathname) || (url.pathname === METRICS_PATH && !metricsAuth);
    if (!open) gate.checkHost(req);
    if (!isApiPath(url.pathname) && (req.method === 'GET' || req.method === 'HEAD')) {
      if (opts.webRoot === undefined) throw new HttpError('not_found', 'this server has no dashboard (no web root)');
      return serveStatic(opts.webRoot, url.pathname, res, { headOnly: req.method === 'HEAD' });
    }
    // An unknown route is told as such (404/405) before any authentication.
    const { handler: route, params } = routeRequest(router, req, res);
    const caller = route.auth ? gate.authenticate(req) : null;
    await route.handler({ req, res, url, params, caller });
  }

  const log = requestLogger(opts.logger);
  const onDone = (outcome: RequestOutcome): void => {
    opts.metrics?.observeRequest(outcome);
    log(outcome);
  };
  const listener = createRequestListener({ handle, toHttpError, onDone });
  // An https.Server is an http.Server over TLS sockets (the same requests, upgrades and close calls).
  const server = outlastClients(opts.tls ? (createTlsServer({ cert: opts.tls.cert, key: opts.tls.key }, listener) as unknown as Server) : createServer(listener));
  const open = (service: ApiService): void => {
    served = {
      ...sessionRoutes(service),
      ...streamRoutes({ service, keepAliveMs }),
      ...workspaceRoutes({ service, keepAliveMs }),
      ...conversationRoutes(service),
      ...poolRoutes(service),
      ...egressRoutes(service),
    };
    attachShellRoute(server, { service, gate, keepAliveMs, ...(opts.logger ? { log: opts.logger } : {}) });
    if (!opts.readiness) readiness.markReady();
  };
  // A service that fails to start is the caller's to report (startServe closes the server).
  if (opts.service instanceof Promise) opts.service.then(open, () => undefined);
  else open(opts.service);
  return server;
}
