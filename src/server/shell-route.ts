/**
 * The shell route: `GET /api/v1/sessions/{id}/shell` upgraded to a WebSocket carrying
 * ShellClientMessage / ShellServerMessage JSON frames, bridged to `SessionService.openShell` by
 * `shell-bridge.ts`. Each socket is pinged while it is open (shared/ws-ping.ts).
 * @module
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { pingUntilGone } from '../shared/ws-ping.js';
import type { SessionService } from '../controller/index.js';
import type { Gate } from './dashboard/gate.js';
import { apiRoutes, MAX_SHELL_FRAME_BYTES } from '../api/index.js';
import { HttpError, parseTarget, rejectUpgrade, Router } from '../shared/http/index.js';
import { toHttpError } from './error-response.js';
import { resolveSessionRef } from './session-ref.js';
import { bridgeShell, type BridgeLogger } from './shell-bridge.js';

/** The one route taking a WebSocket upgrade. */
const upgradeRoutes = new Router<true>().add('GET', apiRoutes.shell(':id'), true);

/** The streams' keep-alive interval when none is given (`createApiServer`'s default). */
const DEFAULT_KEEP_ALIVE_MS = 15_000;

interface ShellRouteOptions {
  service: SessionService;
  gate: Gate;
  log?: BridgeLogger;
  /** How often an open shell socket is pinged (the streams' keep-alive). @default 15000 */
  keepAliveMs?: number;
}

/** Serves the shell WebSocket on `server`'s upgrade requests (every other upgrade gets a 404). */
export function attachShellRoute(server: Server, opts: ShellRouteOptions): void {
  const { service, gate, log } = opts;
  const keepAliveMs = opts.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
  // A larger frame closes its socket with 1009 (the clients split input below this).
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_SHELL_FRAME_BYTES });

  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // node:http hands an upgrade's socket over without an 'error' listener: a peer that resets
    // (or a write after it did) would otherwise be an uncaught error that ends the server.
    // Nothing to do with it: the socket is destroyed, and an upgraded one's WebSocket reports it.
    socket.on('error', () => undefined);
    let url: URL;
    try {
      url = parseTarget(req);
    } catch (err) {
      return rejectUpgrade(socket, toHttpError(err));
    }
    // The Host, then the token or the dashboard cookie (with its CSRF token and this server's
    // Origin) are checked before the upgrade, so a refused peer never gets a socket. Browsers cannot
    // set headers on WebSockets: `?token=` and `?csrf=` are accepted here (and only here); never log
    // this URL's query.
    const problem = gate.upgradeProblem(req, url);
    if (problem) return rejectUpgrade(socket, problem);
    const match = upgradeRoutes.match(req.method ?? 'GET', url.pathname);
    if (match.kind !== 'found') return rejectUpgrade(socket, new HttpError('not_found', 'no WebSocket route here'));
    const size = (name: string, dflt: number): number => {
      const n = Number(url.searchParams.get(name) ?? dflt);
      return Number.isInteger(n) && n >= 1 && n <= 1000 ? n : dflt;
    };
    const rows = size('rows', 24);
    const cols = size('cols', 80);
    const term = url.searchParams.get('term') ?? undefined;
    // A session name is resolved to its id before the upgrade, like on every other route.
    resolveSessionRef(service, match.params['id'] ?? '').then(
      (id) =>
        wss.handleUpgrade(req, socket, head, (ws) => {
          // pinged while open: traffic on an idle shell for a proxy's read timeout, and a vanished client ends it
          pingUntilGone(ws, { intervalMs: keepAliveMs });
          void bridgeShell(ws, service, { id, rows, cols, ...(term !== undefined ? { term } : {}) }, log);
        }),
      (err: unknown) => rejectUpgrade(socket, toHttpError(err)),
    );
  }

  server.on('upgrade', handleUpgrade);
  // A bad handshake (e.g. no Sec-WebSocket-Key) is answered 400 by `ws` on the socket above, whose
  // 'error' listener covers a peer that already left.
  wss.on('error', (err) => log?.warn({ error: err.message }, 'shell WebSocket server failed'));
  const terminate = (): void => {
    for (const ws of wss.clients) ws.terminate();
  };
  shellTerminators.set(server, terminate);
  server.on('close', () => {
    terminate();
    wss.close();
  });
}

const shellTerminators = new WeakMap<Server, () => void>();

/**
 * Closes every shell socket of `server` (each one ends its shell). Call it before `server.close()`:
 * upgraded sockets are not closed by `closeAllConnections()`, and `close()` waits for them.
 */
export function terminateShells(server: Server): void {
  shellTerminators.get(server)?.();
}
