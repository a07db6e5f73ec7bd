/**
 * The dashboard's own routes: minting a login code (bearer only, for `berth dashboard`), the
 * code → cookie exchange (the one answer that carries the CSRF token), whether the cookie session
 * is live, and logout.
 * @module
 */
import { DashboardLoginRequestSchema } from '../../api/index.js';
import { HttpError, readJson, sendJson } from '../../shared/http/index.js';
import type { DashboardAuth } from '../dashboard/auth.js';
import type { Gate } from '../dashboard/gate.js';
import { cookieValue } from '../dashboard/guard.js';
import type { ApiHandlers } from './types.js';

const CODE_REFUSED = 'this login code was already used or has expired; run `berth dashboard` for a new one';

/** The login request is a short code: a larger body is refused unread. */
const MAX_LOGIN_BODY = 4096;

export function dashboardRoutes(auth: DashboardAuth, gate: Gate): ApiHandlers<'dashboardCodes' | 'dashboardLogin' | 'dashboardSession' | 'dashboardLogout'> {
  return {
    dashboardCodes: ({ res, caller }) => {
      if (caller?.kind !== 'bearer') throw new HttpError('forbidden', 'login codes are issued to the bearer token only: run `berth dashboard`');
      sendJson(res, 200, auth.issueCode());
    },
    dashboardLogin: async ({ req, res }) => {
      gate.checkOriginIfSent(req);
      const body = await readJson(req, DashboardLoginRequestSchema, MAX_LOGIN_BODY);
      // A browser already logged in keeps its cookie: the new tab's token joins that session.
      const session = auth.redeem(body.code, cookieValue(req.headers.cookie, auth.cookieName));
      if (!session) throw new HttpError('unauthorized', CODE_REFUSED);
      res.setHeader('set-cookie', auth.sessionCookie(session.cookie));
      sendJson(res, 200, { csrf: session.csrf });
    },
    dashboardSession: ({ res, caller }) => {
      // Reached only with the cookie and its CSRF token (the gate checked both): the token is
      // never told here, so a captured cookie cannot learn it.
      if (caller?.kind !== 'cookie') throw new HttpError('unauthorized', 'not logged in to the dashboard: run `berth dashboard` for a login link');
      sendJson(res, 200, { loggedIn: true });
    },
    dashboardLogout: ({ res, caller }) => {
      if (caller?.kind === 'cookie') auth.logout(caller.cookie);
      res.writeHead(204, { 'set-cookie': auth.clearedCookie() }).end();
    },
  };
}
