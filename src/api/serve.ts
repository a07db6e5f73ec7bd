/**
 * Runs the API server for a data dir: takes the single-writer lock, writes a fresh token, binds
 * 127.0.0.1 and records the actual port in `serve.json`. `close()` undoes all of it.
 * @module
 */
import type { AddressInfo } from 'node:net';
import type { SessionService } from '../controller/service.js';
import { acquireServeLock, removeServeInfo, writeApiToken, writeServeInfo } from './data-dir.js';
import { createApiServer, type ApiLogger } from './server.js';
import { terminateShells } from './shell-route.js';

export interface ServeOptions {
  dataDir: string;
  /** 0 picks a free port. */
  port: number;
  version: string;
  logger?: ApiLogger;
  /** Called once the lock is held (so a refused second serve never touches the controller's state). */
  createService: () => Promise<SessionService>;
}

export interface ServeHandle {
  port: number;
  close(): Promise<void>;
}

export async function startServe(opts: ServeOptions): Promise<ServeHandle> {
  const release = acquireServeLock(opts.dataDir);
  let service: SessionService | undefined;
  try {
    service = await opts.createService();
    const token = writeApiToken(opts.dataDir);
    const server = createApiServer({ service, token, version: opts.version, ...(opts.logger ? { logger: opts.logger } : {}) });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    writeServeInfo(opts.dataDir, { pid: process.pid, port, startedAt: new Date().toISOString() });
    const svc = service;
    let closing: Promise<void> | undefined;
    return {
      port,
      close: () =>
        (closing ??= (async () => {
          removeServeInfo(opts.dataDir);
          server.closeAllConnections();
          terminateShells(server);
          await new Promise<void>((resolve) => server.close(() => resolve()));
          try {
            await svc.close();
          } finally {
            release();
          }
        })()),
    };
  } catch (err) {
    await service?.close().catch(() => undefined);
    release();
    throw err;
  }
}
