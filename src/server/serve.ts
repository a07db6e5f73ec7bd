/**
 * Runs the API server for a data dir: takes the single-writer lock, writes a fresh token, binds
 * 127.0.0.1 (or `host`) and records the actual port in `serve.json`. `close()` undoes all of it.
 * @module
 */
import type { AddressInfo } from 'node:net';
import { acquireServeLock, removeServeInfo, writeApiToken, writeServeInfo } from './data-dir.js';
import { hostName } from './dashboard/guard.js';
import type { LaunchOptions } from '../api/index.js';
import { createApiServer, type ApiLogger, type ApiService } from './server.js';
import { terminateShells } from './shell-route.js';

interface ServeOptions {
  dataDir: string;
  /** 0 picks a free port. */
  port: number;
  version: string;
  logger?: ApiLogger;
  /** Called once the lock is held (so a refused second serve never touches the controller's state). */
  createService: () => Promise<ApiService>;
  /** sha256 of the config file the service runs with (null: built-in defaults), for `berth doctor`. */
  configSha256?: string | null;
  /** The address to bind. @default '127.0.0.1' */
  host?: string;
  /** The built web app served by the dashboard (`dist/web`); absent: the dashboard paths answer 404. */
  webRoot?: string;
  /** What `GET /api/v1/launch-options` answers. */
  launchOptions?: LaunchOptions;
}

export const DEFAULT_HOST = '127.0.0.1';

/** Whether `host` is a loopback address (binding it keeps the API off the network). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

export interface ServeHandle {
  port: number;
  close(): Promise<void>;
}

export async function startServe(opts: ServeOptions): Promise<ServeHandle> {
  const release = acquireServeLock(opts.dataDir);
  let service: ApiService | undefined;
  const host = opts.host ?? DEFAULT_HOST;
  try {
    service = await opts.createService();
    const token = writeApiToken(opts.dataDir);
    const server = createApiServer({
      service,
      token,
      version: opts.version,
      ...(opts.logger ? { logger: opts.logger } : {}),
      ...(opts.configSha256 !== undefined ? { configSha256: opts.configSha256 } : {}),
      ...(opts.webRoot !== undefined ? { webRoot: opts.webRoot } : {}),
      ...(opts.launchOptions !== undefined ? { launchOptions: opts.launchOptions } : {}),
      ...(host !== DEFAULT_HOST ? { host } : {}),
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, host.replace(/^\[|\]$/g, ''), () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    writeServeInfo(opts.dataDir, { pid: process.pid, port, startedAt: new Date().toISOString(), ...(host !== DEFAULT_HOST ? { host: hostName(host) } : {}) });
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
