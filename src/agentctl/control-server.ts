/**
 * The control server on 127.0.0.1:$AGENTCTL_PORT (and on an inherited Unix socket, $AGENTCTL_CONTROL_FD): health and the handshake (both public), and the
 * instance API (bearer token). A request or WebSocket upgrade that carries X-Instance-ID is handed
 * to that instance's server (its own authentication applies): a controller behind one port-forward
 * reaches the control and instance APIs through it, one WebSocket per connection fewer to set up.
 * @module
 */
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { AGENTCTL_FEATURES, controlRoutes, CreateInstanceRequestSchema, HandshakeRequestSchema, HEADER, LIMITS } from '../protocol/index.js';
import { createRequestListener as kitListener, readJson, rejectUpgrade, Router } from '../shared/http/index.js';
import { outlastClients } from '../shared/keep-alive.js';
import type { Auth } from './auth.js';
import { closeAcceptor, closeServer, listen, listenInherited } from './http/listen.js';
import { createRequestListener, type Route } from './http/server.js';
import type { InstanceManager } from './instances.js';
import { protocolError } from './errors.js';
import { toHttpError } from './http/respond.js';
import { VERSION } from './version.js';

const HANDSHAKE_MAX_BYTES = 4096;

function controlRouter(auth: Auth, instances: InstanceManager, log: Logger): Router<Route> {
  const r = new Router<Route>();
  r.add('GET', controlRoutes.health, { public: true, handler: () => ({ status: 200, body: { status: 'ok', version: VERSION, features: [AGENTCTL_FEATURES.instanceApiOnControl] } }) });
  r.add('POST', controlRoutes.handshake, {
    public: true,
    handler: async ({ req }) => {
      // Unauthenticated: accept only a small body.
      const { nonce } = await readJson(req, HandshakeRequestSchema, HANDSHAKE_MAX_BYTES);
      try {
        const token = auth.handshake(nonce);
        log.info('handshake accepted');
        return { status: 200, body: { token } };
      } catch (err) {
        log.warn('handshake rejected');
        throw err;
      }
    },
  });
  r.add('GET', controlRoutes.instances, { handler: () => ({ status: 200, body: { instances: instances.list() } }) });
  r.add('POST', controlRoutes.instances, {
    handler: async ({ req }) => {
      const { created, info } = await instances.create(await readJson(req, CreateInstanceRequestSchema, LIMITS.maxBodyBytes));
      return { status: created ? 201 : 200, body: info };
    },
  });
  r.add('GET', controlRoutes.instance(':id'), { handler: ({ params }) => ({ status: 200, body: instances.get(params['id'] as string) }) });
  r.add('DELETE', controlRoutes.instance(':id'), {
    handler: async ({ params }) => {
      await instances.delete(params['id'] as string);
      return { status: 204 };
    },
  });
  return r;
}

/** The instance a request names in X-Instance-ID, or null when it names none. */
function namedInstance(req: IncomingMessage): string | null {
  const id = req.headers[HEADER.instanceId];
  return typeof id === 'string' && id !== '' ? id : null;
}

/** An instance the control server cannot hand a request to: 401 without the token (strangers learn nothing), else 404. */
function unknownInstance(auth: Auth, req: IncomingMessage, id: string): Error {
  auth.verifyBearer(req);
  return protocolError('not_found', `no instance ${id}`);
}

export function createControlServer(auth: Auth, instances: InstanceManager, log: Logger): Server {
  const control = createRequestListener(controlRouter(auth, instances, log), (req) => auth.verifyBearer(req), log);
  const unknown = kitListener({
    handle: async (req) => {
      throw unknownInstance(auth, req, namedInstance(req) ?? '');
    },
    toHttpError,
  });
  const listener: RequestListener = (req, res) => {
    const id = namedInstance(req);
    if (id === null) return void control(req, res);
    const target = instances.server(id);
    if (target === undefined) return void unknown(req, res);
    target.handle(req, res);
  };
  const server = outlastClients(createServer(listener));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    const id = namedInstance(req);
    const target = id === null ? undefined : instances.server(id);
    if (target !== undefined) return target.upgrade(req, socket, head);
    try {
      rejectUpgrade(socket, toHttpError(id === null ? protocolError('not_found', 'the control server has no WebSocket routes of its own') : unknownInstance(auth, req, id)));
    } catch (err) {
      rejectUpgrade(socket, toHttpError(err));
    }
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  return server;
}

export { closeAcceptor, closeServer, listen, listenInherited };
