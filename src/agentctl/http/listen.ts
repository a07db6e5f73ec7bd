/**
 * Binding servers to loopback and closing them completely.
 * @module
 */
import type { Server } from 'node:http';

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
