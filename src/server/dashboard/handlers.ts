/**
 * The dashboard's own routes: minting a login code (bearer only, for `berth dashboard`), the
 * code → cookie exchange (the one answer that carries the CSRF token), whether the cookie session
 * is live, and logout.
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from '../error-response.js';
import { readJson, sendJson } from '../http-util.js';
import { DashboardLoginRequestSchema } from '../../api/schemas.js';
import type { DashboardAuth } from './auth.js';
import type { Caller, Gate } from './gate.js';
import { cookieValue } from './guard.js';

export type DashboardOperation = 'dashboardCodes' | 'dashboardLogin' | 'dashboardSession' | 'dashboardLogout';

export const CODE_REFUSED = 'this login code was already used or has expired; run `berth dashboard` for a new one';

export async function handleDashboard(
  op: DashboardOperation,
  ctx: { req: IncomingMessage; res: ServerResponse; auth: DashboardAuth; gate: Gate; caller: Caller | null },
): Promise<void> {
  const { req, res, auth, caller } = ctx;
  switch (op) {
    case 'dashboardCodes': {
      if (caller?.kind !== 'bearer') throw new HttpError('forbidden', 'login codes are issued to the bearer token only: run `berth dashboard`');
      return sendJson(res, 200, auth.issueCode());
    }
    case 'dashboardLogin': {
      ctx.gate.checkOriginIfSent(req);
      const body = await readJson(req, DashboardLoginRequestSchema, 4096);
      // A browser already logged in keeps its cookie: the new tab's token joins that session.
      const session = auth.redeem(body.code, cookieValue(req.headers.cookie, auth.cookieName));
      if (!session) throw new HttpError('unauthorized', CODE_REFUSED);
      res.setHeader('set-cookie', auth.sessionCookie(session.cookie));
      res.setHeader('cache-control', 'no-store');
      return sendJson(res, 200, { csrf: session.csrf });
    }
    case 'dashboardSession': {
      // Reached only with the cookie and its CSRF token (the gate checked both): the token is
      // never told here, so a captured cookie cannot learn it.
      if (caller?.kind !== 'cookie') throw new HttpError('unauthorized', 'not logged in to the dashboard: run `berth dashboard` for a login link');
      res.setHeader('cache-control', 'no-store');
      return sendJson(res, 200, { loggedIn: true });
    }
    case 'dashboardLogout': {
      if (caller?.kind === 'cookie') auth.logout(caller.cookie);
      res.writeHead(204, { 'set-cookie': auth.clearedCookie() }).end();
      return;
    }
  }
}
