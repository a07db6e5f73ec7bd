/**
 * One instance's HTTP server on its own loopback port. Every request and every WebSocket upgrade
 * must carry the bearer token and this instance's id in X-Instance-ID. The control server hands it
 * the requests and upgrades that name this instance too ({@link InstanceServer.handle}), so the same
 * API is reachable through the control port.
 * @module
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { instanceRoutes, MAX_STREAM_FRAME_BYTES } from '../protocol/index.js';
import { parseTarget, rejectUpgrade, Router } from '../shared/http/index.js';
import { outlastClients } from '../shared/keep-alive.js';
import type { Auth } from './auth.js';
import { protocolError } from './errors.js';
import { closeServer, listen } from './http/listen.js';
import { intParam } from './http/query.js';
import { toHttpError } from './http/respond.js';
import { createRequestListener } from './http/server.js';
import { instanceRouter, type InstanceContext } from './instance-routes.js';
import { streamProcess } from './processes/stream.js';

export class InstanceServer {
  readonly #server: Server;
  readonly #listener: RequestListener;
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: MAX_STREAM_FRAME_BYTES });
  readonly #streamRouter = new Router<true>().add('GET', instanceRoutes.processStream(':id'), true);

  constructor(
    private readonly ctx: InstanceContext,
    private readonly auth: Auth,
    log: Logger,
  ) {
    const authenticate = (req: IncomingMessage): void => auth.verifyInstance(req, ctx.id);
    this.#listener = createRequestListener(instanceRouter(ctx), authenticate, log);
    this.#server = outlastClients(createServer(this.#listener));
    this.#server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
    this.#server.on('clientError', (_err, socket) => socket.destroy());
  }

  /** Binds `port` on loopback (0: any free port) and resolves with the bound port (rejects with EADDRINUSE and friends). */
  async listen(port: number): Promise<number> {
    await listen(this.#server, port);
    return (this.#server.address() as AddressInfo).port;
  }

  /** Serves a request that reached another server (the control port) for this instance. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    void this.#listener(req, res);
  }

  close(): Promise<void> {
    for (const client of this.#wss.clients) client.terminate();
    return closeServer(this.#server);
  }

  /** A WebSocket upgrade for this instance, on its own port or handed over by the control server. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => undefined);
    let id: string;
    let from: number;
    try {
      // Authenticate before handleUpgrade: a socket that never becomes a WebSocket cannot be
      // used to probe the stream, and the caller gets a plain HTTP 401/403 it can read.
      this.auth.verifyInstance(req, this.ctx.id);
      const url = parseTarget(req);
      const match = this.#streamRouter.match(req.method ?? 'GET', url.pathname);
      if (match.kind !== 'found') throw protocolError('not_found', `no WebSocket route for ${url.pathname}`);
      id = match.params['id'] as string;
      from = intParam(url.searchParams, 'from', 0, 0, Number.MAX_SAFE_INTEGER);
      this.ctx.processes.get(id); // 404 before upgrading
    } catch (err) {
      rejectUpgrade(socket, toHttpError(err));
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => streamProcess(ws, this.ctx.processes, id, from));
  }
}
