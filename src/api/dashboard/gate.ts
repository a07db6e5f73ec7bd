/**
 * Who may call: every request (and WebSocket upgrade) passes the Host check, then authenticates
 * with the bearer token or the dashboard cookie. A cookie caller must come from the server's own
 * Origin, and every POST/DELETE it makes carries the session's CSRF token in `x-berth-csrf`.
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../error-response.js';
import { bearerToken, tokenMatches } from '../http-util.js';
import { DASHBOARD_COOKIE, type DashboardAuth } from './auth.js';
import { cookieValue, hostProblem, originProblem } from './guard.js';

export const CSRF_HEADER = 'x-berth-csrf';

export type Caller = { kind: 'bearer' } | { kind: 'cookie'; cookie: string; csrf: string };

export interface GateOptions {
  token: string;
  auth: DashboardAuth;
  /** The accepted Host header values (known once the server listens). */
  hosts: () => readonly string[];
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

export class Gate {
  readonly #opts: GateOptions;

  constructor(opts: GateOptions) {
    this.#opts = opts;
  }

  /** Throws 403 unless the Host header names this server. */
  checkHost(req: IncomingMessage): void {
    const problem = hostProblem(req.headers.host, this.#opts.hosts());
    if (problem !== null) throw new HttpError('forbidden', problem);
  }

  /** Throws 403 when an Origin is sent and it is not this server's (for routes open to anyone). */
  checkOriginIfSent(req: IncomingMessage): void {
    const origin = header(req, 'origin');
    if (origin !== undefined) this.#checkOrigin(req, origin);
  }

  /** The caller of an authenticated route; 401 without credentials, 403 for a cookie call that is not same-origin or lacks CSRF. */
  authenticate(req: IncomingMessage): Caller {
    if (tokenMatches(bearerToken(req), this.#opts.token)) return { kind: 'bearer' };
    const cookie = cookieValue(header(req, 'cookie'), DASHBOARD_COOKIE);
    const session = this.#opts.auth.session(cookie);
    if (cookie === undefined || session === null) {
      throw new HttpError(
        'unauthorized',
        cookie === undefined
          ? 'missing or wrong bearer token (it is in <dataDir>/state/api-token)'
          : 'the dashboard login has expired or the server restarted; run `berth dashboard` for a new login link',
      );
    }
    const origin = header(req, 'origin');
    const stateChanging = req.method !== 'GET' && req.method !== 'HEAD';
    if (origin !== undefined || stateChanging) this.#checkOrigin(req, origin);
    if (stateChanging && !tokenMatches(header(req, CSRF_HEADER), session.csrf)) {
      throw new HttpError('forbidden', `missing or wrong ${CSRF_HEADER} header (the token from /api/v1/dashboard/session); reload the page`);
    }
    return { kind: 'cookie', cookie, csrf: session.csrf };
  }

  /**
   * A WebSocket upgrade: the bearer token (header, or `?token=` for browsers that cannot set
   * headers) or the cookie with this server's Origin. Returns the refusal, or null.
   */
  upgradeProblem(req: IncomingMessage, url: URL): { status: number; message: string } | null {
    try {
      this.checkHost(req);
    } catch (err) {
      return { status: 403, message: (err as Error).message };
    }
    const presented = bearerToken(req) ?? url.searchParams.get('token') ?? undefined;
    if (tokenMatches(presented, this.#opts.token)) return null;
    const cookie = cookieValue(header(req, 'cookie'), DASHBOARD_COOKIE);
    if (this.#opts.auth.session(cookie) === null) return { status: 401, message: 'missing or wrong bearer token' };
    const problem = originProblem(header(req, 'origin'), req.headers.host ?? '');
    return problem === null ? null : { status: 403, message: problem };
  }

  #checkOrigin(req: IncomingMessage, origin: string | undefined): void {
    const problem = originProblem(origin, req.headers.host ?? '');
    if (problem !== null) throw new HttpError('forbidden', problem);
  }
}
