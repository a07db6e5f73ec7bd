/**
 * The shell route: `GET /api/v1/sessions/{id}/shell` upgraded to a WebSocket carrying
 * ShellClientMessage / ShellServerMessage JSON frames, bridged to `SessionService.openShell` by
 * `shell-bridge.ts`.
 * @module
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { SessionService } from '../controller/service.js';
import type { Gate } from './dashboard/gate.js';
import { matchRoute } from '../api/routes.js';
import { resolveSessionRef } from './session-ref.js';
import { MAX_SHELL_FRAME_BYTES } from '../api/schemas.js';
import { bridgeShell, type BridgeLogger } from './shell-bridge.js';

/** Serves the shell WebSocket on `server`'s upgrade requests (every other upgrade gets a 404). */
export function attachShellRoute(server: Server, opts: { service: SessionService; gate: Gate; log?: BridgeLogger }): void {
  const { service, gate, log } = opts;
  // A larger frame closes its socket with 1009 (the clients split input below this).
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_SHELL_FRAME_BYTES });

  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // node:http hands an upgrade's socket over without an 'error' listener: a peer that resets
    // (or a write after it did) would otherwise be an uncaught error that ends the server.
    // Nothing to do with it: the socket is destroyed, and an upgraded one's WebSocket reports it.
    socket.on('error', () => undefined);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const match = matchRoute('GET', url.pathname);
    const refuse = (status: number, message: string): void => {
      if (socket.destroyed || !socket.writable) {
        socket.destroy();
        return;
      }
      socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : 'Error'}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${message}\n`);
    };
    // The Host, then the token or the dashboard cookie (with its CSRF token and this server's
    // Origin) are checked before the upgrade, so a refused peer never gets a socket. Browsers cannot
    // set headers on WebSockets: `?token=` and `?csrf=` are accepted here (and only here); never log
    // this URL's query.
    const problem = gate.upgradeProblem(req, url);
    if (problem) return refuse(problem.status, problem.message);
    if ('error' in match || match.operation !== 'shell') return refuse(404, 'no WebSocket route here');
    const size = (name: string, dflt: number): number => {
      const n = Number(url.searchParams.get(name) ?? dflt);
      return Number.isInteger(n) && n >= 1 && n <= 1000 ? n : dflt;
    };
    const rows = size('rows', 24);
    const cols = size('cols', 80);
    const term = url.searchParams.get('term') ?? undefined;
    // A session name is resolved to its id before the upgrade, like on every other route.
    resolveSessionRef(service, match.id ?? '').then(
      (id) =>
        wss.handleUpgrade(req, socket, head, (ws) => {
          void bridgeShell(ws, service, { id, rows, cols, ...(term !== undefined ? { term } : {}) }, log);
        }),
      (err: unknown) => refuse(400, err instanceof Error ? err.message : String(err)),
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
