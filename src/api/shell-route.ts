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
import { matchRoute } from './routes.js';
import { resolveSessionRef } from './session-ref.js';
import { bridgeShell } from './shell-bridge.js';

/** Serves the shell WebSocket on `server`'s upgrade requests (every other upgrade gets a 404). */
export function attachShellRoute(server: Server, opts: { service: SessionService; gate: Gate }): void {
  const { service, gate } = opts;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20 });

  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const match = matchRoute('GET', url.pathname);
    const refuse = (status: number, message: string): void => {
      socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : 'Error'}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${message}\n`);
    };
    // The Host, then the token or the dashboard cookie (with this server's Origin) are checked
    // before the upgrade, so a refused peer never gets a socket. Browsers cannot set headers on
    // WebSockets: `?token=` is accepted here (and only here); the dashboard uses its cookie instead.
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
          void bridgeShell(ws, service, { id, rows, cols, ...(term !== undefined ? { term } : {}) });
        }),
      (err: unknown) => refuse(400, err instanceof Error ? err.message : String(err)),
    );
  }

  server.on('upgrade', handleUpgrade);
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
