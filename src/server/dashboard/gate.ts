/**
 * Who may call: every request (and WebSocket upgrade) passes the Host check, then authenticates
 * with the bearer token or the dashboard cookie together with its CSRF token. The cookie alone is
 * refused on every route, GET and streams included (see `auth.ts` for why); a cookie caller also
 * must come from the server's own Origin (always sent on POST/DELETE, checked on any request that has one).
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { bearerToken, HttpError, tokenMatches } from '../../shared/http/index.js';
import type { CookieCheck, DashboardAuth } from './auth.js';
import { cookieValue, hostProblem, originProblem, type OriginScheme } from './guard.js';

/** The header carrying the CSRF token on every cookie request. */
const CSRF_HEADER = 'x-berth-csrf';
/**
 * The query parameter carrying it on the shell WebSocket upgrade only (a browser cannot set
 * headers on a WebSocket). The request log writes paths without their query.
 */
const CSRF_QUERY = 'csrf';

export type Caller = { kind: 'bearer' } | { kind: 'cookie'; cookie: string };

interface GateOptions {
  token: string;
  auth: DashboardAuth;
  /** The accepted Host header values (known once the server listens). */
  hosts: () => readonly string[];
  /** The schemes of the server's own Origin (`originProblem`). @default ['http'] */
  originSchemes?: readonly OriginScheme[];
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

const MISSING_TOKEN = 'missing or wrong bearer token (it is in <dataDir>/state/api-token)';

/** Why a cookie request is refused (401), or null. */
function cookieProblem(found: CookieCheck): string | null {
  switch (found) {
    case 'ok':
      return null;
    case 'no_session':
      return 'the dashboard login has expired or the server restarted; run `berth dashboard` for a new login link';
    case 'wrong_csrf':
      return `the dashboard cookie is refused without its ${CSRF_HEADER} token (given once, at login); run \`berth dashboard\` for a new login link`;
  }
}

export class Gate {
  readonly #opts: GateOptions;

  constructor(opts: GateOptions) {
    this.#opts = opts;
  }

  /** Throws 403 unless the Host header names this server. */
  checkHost(req: IncomingMessage): void {
    const refused = this.#hostRefusal(req);
    if (refused !== null) throw refused;
  }

  /** Throws 403 when an Origin is sent and it is not this server's (for routes open to anyone). */
  checkOriginIfSent(req: IncomingMessage): void {
    const origin = header(req, 'origin');
    if (origin !== undefined) this.#checkOrigin(req, origin);
  }

  /**
   * The caller of an authenticated route: 401 without the bearer token or without the cookie and
   * its CSRF token (`x-berth-csrf`), 403 for a cookie call from another Origin.
   */
  authenticate(req: IncomingMessage): Caller {
    if (tokenMatches(bearerToken(req), this.#opts.token)) return { kind: 'bearer' };
    const cookie = cookieValue(header(req, 'cookie'), this.#opts.auth.cookieName);
    if (cookie === undefined) throw new HttpError('unauthorized', MISSING_TOKEN);
    const problem = cookieProblem(this.#opts.auth.check(cookie, header(req, CSRF_HEADER)));
    if (problem !== null) throw new HttpError('unauthorized', problem);
    const origin = header(req, 'origin');
    if (origin !== undefined || (req.method !== 'GET' && req.method !== 'HEAD')) this.#checkOrigin(req, origin);
    return { kind: 'cookie', cookie };
  }

  /**
   * A WebSocket upgrade: the bearer token (header, or `?token=` for browsers that cannot set
   * headers) or the cookie with its CSRF token (`?csrf=`, or the header) and this server's
   * Origin. Returns the refusal (401 or 403), or null.
   */
  upgradeProblem(req: IncomingMessage, url: URL): HttpError | null {
    const hostRefused = this.#hostRefusal(req);
    if (hostRefused !== null) return hostRefused;
    const presented = bearerToken(req) ?? url.searchParams.get('token') ?? undefined;
    if (tokenMatches(presented, this.#opts.token)) return null;
    const cookie = cookieValue(header(req, 'cookie'), this.#opts.auth.cookieName);
    if (cookie === undefined) return new HttpError('unauthorized', 'missing or wrong bearer token');
    const problem = cookieProblem(this.#opts.auth.check(cookie, url.searchParams.get(CSRF_QUERY) ?? header(req, CSRF_HEADER)));
    if (problem !== null) return new HttpError('unauthorized', problem);
    const originRefused = originProblem(header(req, 'origin'), req.headers.host ?? '', this.#opts.originSchemes);
    return originRefused === null ? null : new HttpError('forbidden', originRefused);
  }

  #hostRefusal(req: IncomingMessage): HttpError | null {
    const problem = hostProblem(req.headers.host, this.#opts.hosts());
    return problem === null ? null : new HttpError('forbidden', problem);
  }

  #checkOrigin(req: IncomingMessage, origin: string | undefined): void {
    const problem = originProblem(origin, req.headers.host ?? '', this.#opts.originSchemes);
    if (problem !== null) throw new HttpError('forbidden', problem);
  }
}
