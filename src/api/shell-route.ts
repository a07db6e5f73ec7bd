/**
 * The shell route: `GET /api/v1/sessions/{id}/shell` upgraded to a WebSocket carrying
 * ShellClientMessage / ShellServerMessage JSON frames, bridged to a PTY by `shell-bridge.ts`.
 * @module
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { SessionService } from '../controller/service.js';
import { toErrorResponse } from './error-response.js';
import { bearerToken, toWire, tokenMatches } from './http-util.js';
import { matchRoute } from './routes.js';
import { ShellClientMessageSchema, type ShellClientMessage, type ShellServerMessage } from './schemas.js';
import { openShell } from './shell-bridge.js';

/** Serves the shell WebSocket on `server`'s upgrade requests (every other upgrade gets a 404). */
export function attachShellRoute(server: Server, opts: { service: SessionService; token: string }): void {
  const { service, token } = opts;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20 });

  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const match = matchRoute('GET', url.pathname);
    const refuse = (status: number, message: string): void => {
      socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Error'}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${message}\n`);
    };
    if ('error' in match || match.operation !== 'shell') return refuse(404, 'no WebSocket route here');
    // The token is checked before the upgrade so an unauthenticated peer never gets a socket.
    // Browsers cannot set headers on WebSockets, so `?token=` is accepted here (and only here);
    // the token is regenerated on every `berth serve` start.
    const presented = bearerToken(req) ?? url.searchParams.get('token') ?? undefined;
    if (!tokenMatches(presented, token)) return refuse(401, 'missing or wrong bearer token');
    const size = (name: string, dflt: number): number => {
      const n = Number(url.searchParams.get(name) ?? dflt);
      return Number.isInteger(n) && n >= 1 && n <= 1000 ? n : dflt;
    };
    const id = match.id ?? '';
    const rows = size('rows', 24);
    const cols = size('cols', 80);
    const term = url.searchParams.get('term') ?? undefined;
    wss.handleUpgrade(req, socket, head, (ws) => {
      void runShell(ws, id, rows, cols, term);
    });
  }

  async function runShell(ws: WebSocket, id: string, rows: number, cols: number, term: string | undefined): Promise<void> {
    const send = (m: ShellServerMessage): void => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(m));
    };
    // Listen before the shell exists: input sent right after the upgrade is queued, not lost.
    let shell: Awaited<ReturnType<typeof openShell>> | undefined;
    const early: ShellClientMessage[] = [];
    let closed = false;
    const apply = (msg: ShellClientMessage): void => {
      if (!shell) {
        early.push(msg);
        return;
      }
      switch (msg.type) {
        case 'stdin':
          shell.write(Buffer.from(msg.data, 'base64'));
          break;
        case 'resize':
          shell.resize(msg.rows, msg.cols);
          break;
        case 'eof':
          shell.write(Buffer.from([4])); // ^D through the PTY's line discipline
          break;
      }
    };
    ws.on('message', (raw) => {
      let msg: ShellClientMessage;
      try {
        msg = ShellClientMessageSchema.parse(JSON.parse(String(raw)));
      } catch {
        send({ type: 'error', error: { code: 'bad_request', message: 'malformed shell message' } });
        return;
      }
      apply(msg);
    });
    ws.on('close', () => {
      closed = true;
      shell?.kill();
    });
    try {
      await service.get(id);
      shell = await openShell(service, id, {
        rows,
        cols,
        ...(term !== undefined && /^[A-Za-z0-9._+-]{1,64}$/.test(term) ? { term } : {}),
        onOutput: (chunk) => send({ type: 'output', chunk: toWire(chunk) }),
      });
    } catch (err) {
      send({ type: 'error', error: toErrorResponse(err).body.error });
      ws.close(1011);
      return;
    }
    if (closed) shell.kill();
    for (const msg of early.splice(0)) apply(msg);
    try {
      const r = await shell.done;
      send({ type: 'exit', exitCode: r.exitCode, signal: r.signal });
    } catch (err) {
      send({ type: 'error', error: toErrorResponse(err).body.error });
    }
    ws.close(1000);
  }


  server.on('upgrade', handleUpgrade);
  server.on('close', () => {
    for (const ws of wss.clients) ws.terminate();
    wss.close();
  });
}
