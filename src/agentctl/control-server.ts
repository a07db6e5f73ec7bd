/**
 * The control server on 127.0.0.1:$AGENTCTL_PORT: health and the handshake (both public), and the
 * instance API (bearer token).
 * @module
 */
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { controlRoutes, CreateInstanceRequestSchema, HandshakeRequestSchema, LIMITS } from '../protocol/index.js';
import { readJson, rejectUpgrade, Router } from '../shared/http/index.js';
import { outlastClients } from '../shared/keep-alive.js';
import type { Auth } from './auth.js';
import { closeServer, listen } from './http/listen.js';
import { createRequestListener, type Route } from './http/server.js';
import type { InstanceManager } from './instances.js';
import { protocolError } from './errors.js';
import { VERSION } from './version.js';

const HANDSHAKE_MAX_BYTES = 4096;

function controlRouter(auth: Auth, instances: InstanceManager, log: Logger): Router<Route> {
  const r = new Router<Route>();
  r.add('GET', controlRoutes.health, { public: true, handler: () => ({ status: 200, body: { status: 'ok', version: VERSION } }) });
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

export function createControlServer(auth: Auth, instances: InstanceManager, log: Logger): Server {
  const server = outlastClients(createServer(createRequestListener(controlRouter(auth, instances, log), (req) => auth.verifyBearer(req), log)));
  server.on('upgrade', (_req, socket) => {
    socket.on('error', () => undefined);
    rejectUpgrade(socket, protocolError('not_found', 'the control server has no WebSocket routes'));
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  return server;
}

export { closeServer, listen };
