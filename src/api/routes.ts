/**
 * Every route of the Berth HTTP API, written once: the server matches these, the typed client
 * builds its URLs from them and the OpenAPI description lists them. No Node APIs here.
 * @module
 */

const API_PREFIX = '/api/v1';

/** Default port of `berth serve` (loopback only). */
export const DEFAULT_API_PORT = 7420;

const enc = encodeURIComponent;

export const apiRoutes = {
  health: '/health',
  healthz: '/healthz',
  readyz: '/readyz',
  metrics: '/metrics',
  openapi: `${API_PREFIX}/openapi.json`,
  sessions: `${API_PREFIX}/sessions`,
  session: (id: string) => `${API_PREFIX}/sessions/${enc(id)}`,
  stop: (id: string) => `${API_PREFIX}/sessions/${enc(id)}/stop`,
  resume: (id: string) => `${API_PREFIX}/sessions/${enc(id)}/resume`,
  events: (id: string) => `${API_PREFIX}/sessions/${enc(id)}/events`,
  logs: (id: string) => `${API_PREFIX}/sessions/${enc(id)}/logs`,
  exec: (id: string) => `${API_PREFIX}/sessions/${enc(id)}/exec`,
  input: (id: string) => `${API_PREFIX}/sessions/${enc(id)}/input`,
  cancel: (id: string) => `${API_PREFIX}/sessions/${enc(id)}/cancel`,
  approve: (id: string) => `${API_PREFIX}/sessions/${enc(id)}/approve`,
  agentEvents: (id: string) => `${API_PREFIX}/sessions/${enc(id)}/agent-events`,
  egress: (id: string) => `${API_PREFIX}/sessions/${enc(id)}/egress`,
  shell: (id: string) => `${API_PREFIX}/sessions/${enc(id)}/shell`,
  allEvents: `${API_PREFIX}/events`,
  launchOptions: `${API_PREFIX}/launch-options`,
  pools: `${API_PREFIX}/pools`,
  pool: (profile: string) => `${API_PREFIX}/pools/${enc(profile)}`,
  dashboardCodes: `${API_PREFIX}/dashboard/codes`,
  dashboardLogin: `${API_PREFIX}/dashboard/login`,
  dashboardSession: `${API_PREFIX}/dashboard/session`,
  dashboardLogout: `${API_PREFIX}/dashboard/logout`,
} as const;

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

/** The route table as OpenAPI path templates; the server's router and the OpenAPI test use it. */
export const ROUTE_TABLE = [
  { method: 'GET', path: '/health', operation: 'health', auth: false },
  // Probes and metrics: no token (a kubelet or Prometheus has none); the server skips the Host check on them.
  { method: 'GET', path: '/healthz', operation: 'healthz', auth: false },
  { method: 'GET', path: '/readyz', operation: 'readyz', auth: false },
  { method: 'GET', path: '/metrics', operation: 'metrics', auth: false },
  { method: 'GET', path: `${API_PREFIX}/openapi.json`, operation: 'openapi', auth: true },
  { method: 'POST', path: `${API_PREFIX}/sessions`, operation: 'launch', auth: true },
  { method: 'GET', path: `${API_PREFIX}/sessions`, operation: 'list', auth: true },
  { method: 'GET', path: `${API_PREFIX}/sessions/{id}`, operation: 'get', auth: true },
  { method: 'DELETE', path: `${API_PREFIX}/sessions/{id}`, operation: 'remove', auth: true },
  { method: 'POST', path: `${API_PREFIX}/sessions/{id}/stop`, operation: 'stop', auth: true },
  { method: 'POST', path: `${API_PREFIX}/sessions/{id}/resume`, operation: 'resume', auth: true },
  { method: 'GET', path: `${API_PREFIX}/sessions/{id}/events`, operation: 'events', auth: true },
  { method: 'GET', path: `${API_PREFIX}/sessions/{id}/logs`, operation: 'logs', auth: true },
  { method: 'POST', path: `${API_PREFIX}/sessions/{id}/exec`, operation: 'exec', auth: true },
  { method: 'POST', path: `${API_PREFIX}/sessions/{id}/input`, operation: 'input', auth: true },
  { method: 'POST', path: `${API_PREFIX}/sessions/{id}/cancel`, operation: 'cancel', auth: true },
  { method: 'POST', path: `${API_PREFIX}/sessions/{id}/approve`, operation: 'approve', auth: true },
  { method: 'GET', path: `${API_PREFIX}/sessions/{id}/agent-events`, operation: 'agentEvents', auth: true },
  { method: 'GET', path: `${API_PREFIX}/sessions/{id}/egress`, operation: 'egress', auth: true },
  { method: 'GET', path: `${API_PREFIX}/sessions/{id}/shell`, operation: 'shell', auth: true },
  { method: 'GET', path: `${API_PREFIX}/events`, operation: 'allEvents', auth: true },
  { method: 'GET', path: `${API_PREFIX}/launch-options`, operation: 'launchOptions', auth: true },
  { method: 'GET', path: `${API_PREFIX}/pools`, operation: 'pools', auth: true },
  { method: 'DELETE', path: `${API_PREFIX}/pools/{id}`, operation: 'removePool', auth: true },
  { method: 'POST', path: `${API_PREFIX}/dashboard/codes`, operation: 'dashboardCodes', auth: true },
  { method: 'POST', path: `${API_PREFIX}/dashboard/login`, operation: 'dashboardLogin', auth: false },
  { method: 'GET', path: `${API_PREFIX}/dashboard/session`, operation: 'dashboardSession', auth: true },
  { method: 'POST', path: `${API_PREFIX}/dashboard/logout`, operation: 'dashboardLogout', auth: true },
] as const satisfies readonly { method: HttpMethod; path: string; operation: string; auth: boolean }[];

export type Operation = (typeof ROUTE_TABLE)[number]['operation'];

/** Matches a request path against the table: the operation, or why not (404 / 405). */
export function matchRoute(
  method: string,
  pathname: string,
): { operation: Operation; auth: boolean; id: string | null } | { error: 'not_found' | 'method_not_allowed' } {
  let pathMatched = false;
  for (const route of ROUTE_TABLE) {
    const id = matchTemplate(route.path, pathname);
    if (id === undefined) continue;
    pathMatched = true;
    if (route.method === method) return { operation: route.operation, auth: route.auth, id };
  }
  return { error: pathMatched ? 'method_not_allowed' : 'not_found' };
}

/** `undefined` when no match; the decoded `{id}` (or null when the template has none). */
function matchTemplate(template: string, pathname: string): string | null | undefined {
  const t = template.split('/');
  const p = pathname.split('/');
  if (t.length !== p.length) return undefined;
  let id: string | null = null;
  for (let i = 0; i < t.length; i++) {
    const seg = p[i] ?? '';
    if (t[i] === '{id}') {
      if (seg === '') return undefined;
      try {
        id = decodeURIComponent(seg);
      } catch {
        return undefined;
      }
    } else if (t[i] !== seg) {
      return undefined;
    }
  }
  return id;
}
