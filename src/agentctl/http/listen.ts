/**
 * Binding servers to loopback (or to an inherited socket) and closing them completely.
 * @module
 */
import type { Server } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';

const LOOPBACK = '127.0.0.1';

/** Listens on 127.0.0.1:`port`; rejects with the listen error (e.g. EADDRINUSE). */
export function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, LOOPBACK);
  });
}

/** Stops accepting, drops every open connection (keep-alive and upgraded ones) and waits for close. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Serves `server` also on the listening socket inherited at `fd` (a Unix socket the executor bound):
 * every connection accepted there is handed to `server` as its own, so its routes, timeouts and
 * WebSocket upgrades apply unchanged. Resolves with the accepting server once it listens.
 */
export function listenInherited(server: Server, fd: number): Promise<NetServer> {
  const acceptor = createNetServer((socket) => server.emit('connection', socket));
  return new Promise((resolve, reject) => {
    acceptor.once('error', reject);
    acceptor.listen({ fd }, () => {
      acceptor.off('error', reject);
      resolve(acceptor);
    });
  });
}

/** Stops `acceptor` accepting (its open connections belong to the server they were handed to). */
export function closeAcceptor(acceptor: NetServer): Promise<void> {
  return new Promise((resolve) => acceptor.close(() => resolve()));
}
