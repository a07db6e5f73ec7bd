/**
 * Runs the API server for a data dir: takes the single-writer lock, writes a fresh token, binds
 * 127.0.0.1 (or `host`), starts the controller and then records the actual port in `serve.json`.
 * The port is bound before the controller starts so that `/healthz` answers during a long
 * recovery (a kubelet would otherwise kill the process) while `/readyz` answers 503 `starting`;
 * `serve.json` is written once the controller is ready, so the CLI finds only a ready server.
 * `close()` undoes all of it (`/readyz` answers `stopping` meanwhile).
 * @module
 */
import type { AddressInfo } from 'node:net';
import { acquireServeLock, removeServeInfo, writeApiToken, writeServeInfo } from './data-dir.js';
import { holdDataDir } from './data-dir-hold.js';
import { hostName } from './dashboard/guard.js';
import type { LaunchOptions } from '../api/index.js';
import { Readiness } from './health.js';
import { metricTargetsFromLaunchOptions } from './metric-targets.js';
import { ServerMetrics, type MetricTarget } from './metrics.js';
import { createApiServer, type ApiLogger, type ApiService } from './server.js';
import { ControllerRun, type ServiceContext } from './controller-run.js';
import { lead, type Leadership, type LeaderSettings } from './leadership.js';
import { terminateShells } from './shell-route.js';

interface ServeOptions {
  dataDir: string;
  /** 0 picks a free port. */
  port: number;
  version: string;
  logger?: ApiLogger;
  /**
   * Called once the lock is held (so a refused second serve never touches the controller's state),
   * and with leader election only once this replica holds the Lease (with the fence to claim).
   */
  createService: (ctx: ServiceContext) => Promise<ApiService>;
  /** Run as one replica of several: only the Lease holder runs the controller (leadership.ts). @default one controller, no election */
  leader?: LeaderSettings;
  /** The controller cannot go on in this process (leadership lost, or failed to start as the new leader): the caller exits. */
  onFatal?: (err: Error) => void;
  /** sha256 of the config file the service runs with (null: built-in defaults), for `berth doctor`. */
  configSha256?: string | null;
  /** The address to bind. @default '127.0.0.1' */
  host?: string;
  /** The built web app served by the dashboard (`dist/web`); absent: the dashboard paths answer 404. */
  webRoot?: string;
  /** What `GET /api/v1/launch-options` answers. */
  launchOptions?: LaunchOptions;
  /** Serve HTTPS with this certificate chain and key (PEM contents). */
  tls?: { cert: string; key: string };
  /** The API token (`--token-file`), written to `state/api-token` too. @default a fresh random one each start */
  token?: string;
  /** Names a Service or Ingress gives the server (`--public-host`), accepted in the Host header. */
  publicHosts?: readonly string[];
  /** Whether the dashboard cookie is `Secure` (`--secure-cookie`). @default whether `tls` is set */
  secureCookie?: boolean;
  /**
   * The launch targets the metrics label, with their executor entry and profile
   * (`metricTargetsOf(config)`). @default the launch options' targets, each labelled as itself
   */
  metricTargets?: readonly MetricTarget[];
  /** Whether `/metrics` needs the API token (and the Host check). @default false: it carries no secret, and Prometheus scrapes without one */
  metricsAuth?: boolean;
  /** What `/readyz` answers; serve marks it ready once the controller is, and `stopping` on close. @default a fresh one */
  readiness?: Readiness;
  /** Called once the port is bound, before the controller starts (the probes answer from then on). */
  onListening?: (port: number) => void;
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
  const host = opts.host ?? DEFAULT_HOST;
  const readiness = opts.readiness ?? new Readiness();
  const metrics = new ServerMetrics({ targets: opts.metricTargets ?? metricTargetsFromLaunchOptions(opts.launchOptions), version: opts.version });
  const unwatch = readiness.onChange((state) => metrics.setReady(state.ready));
  metrics.setReady(readiness.ready);
  metrics.setLeader(opts.leader === undefined);
  let server: ReturnType<typeof createApiServer> | undefined;
  let controller: ControllerRun | undefined;
  let unhold: (() => void) | undefined;
  try {
    const token = writeApiToken(opts.dataDir, opts.token);
    let started: (service: Promise<ApiService>) => void = () => undefined;
    const service = new Promise<ApiService>((resolve) => (started = (s) => resolve(s)));
    server = createApiServer(apiServerOptions(opts, { service, token, readiness, metrics, host }));
    await listen(server, opts.port, host);
    const port = (server.address() as AddressInfo).port;
    opts.onListening?.(port);
    unhold = await holdDataDirFor(opts, readiness);
    const run = new ControllerRun({
      createService: opts.createService,
      started,
      metrics,
      onReady: () => {
        writeServeInfo(opts.dataDir, { pid: process.pid, port, startedAt: new Date().toISOString(), ...(host !== DEFAULT_HOST ? { host: hostName(host) } : {}) });
        readiness.markReady();
      },
      ...(opts.logger ? { logger: opts.logger } : {}),
    });
    controller = run;
    let leadership: Leadership | undefined;
    if (opts.leader !== undefined) {
      const identity = opts.leader.identity;
      leadership = lead({
        settings: opts.leader,
        readiness,
        metrics,
        ...(opts.logger ? { logger: opts.logger } : {}),
        start: (term) => run.start({ holder: identity, generation: term.generation }),
        stop: () => run.stop(),
        onFatal: (err) => (opts.onFatal ?? ((e: Error) => opts.logger?.error({ err: e.message }, 'fatal')))(err),
      });
    } else {
      await run.start(undefined);
    }
    const bound = server;
    let closing: Promise<void> | undefined;
    return {
      port,
      close: () =>
        (closing ??= (async () => {
          readiness.markNotReady('stopping');
          unwatch();
          removeServeInfo(opts.dataDir);
          bound.closeAllConnections();
          terminateShells(bound);
          await new Promise<void>((resolve) => bound.close(() => resolve()));
          try {
            // the controller stops before the Lease is handed over: the next leader never overlaps it
            await (leadership ? leadership.release() : run.stop());
          } finally {
            unhold?.();
            release();
          }
        })()),
    };
  } catch (err) {
    unwatch();
    if (server?.listening) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server?.close(() => resolve()));
    }
    await controller?.stop().catch(() => undefined);
    unhold?.();
    release();
    throw err;
  }
}

/** The data dir's kernel lock, waiting (not ready: `starting`, saying so) while a previous controller still holds it. */
function holdDataDirFor(opts: ServeOptions, readiness: Readiness): Promise<() => void> {
  return holdDataDir(opts.dataDir, {
    onWait: () => {
      readiness.markNotReady('starting', 'waiting for the previous controller on this data dir to stop');
      opts.logger?.info({ dataDir: opts.dataDir }, 'another process holds the data dir (a controller Pod being replaced?): waiting for it to stop');
    },
  });
}

/** The API server's options: what serve was given, and the service, token, probes and metrics it made. */
function apiServerOptions(
  opts: ServeOptions,
  made: { service: Promise<ApiService>; token: string; readiness: Readiness; metrics: ServerMetrics; host: string },
): Parameters<typeof createApiServer>[0] {
  return {
    service: made.service,
    token: made.token,
    version: opts.version,
    readiness: made.readiness,
    metrics: made.metrics,
    ...(opts.metricsAuth !== undefined ? { metricsAuth: opts.metricsAuth } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.configSha256 !== undefined ? { configSha256: opts.configSha256 } : {}),
    ...(opts.webRoot !== undefined ? { webRoot: opts.webRoot } : {}),
    ...(opts.launchOptions !== undefined ? { launchOptions: opts.launchOptions } : {}),
    ...(made.host !== DEFAULT_HOST ? { host: made.host } : {}),
    ...(opts.tls !== undefined ? { tls: opts.tls } : {}),
    ...(opts.publicHosts !== undefined ? { publicHosts: opts.publicHosts } : {}),
    ...(opts.secureCookie !== undefined ? { secureCookie: opts.secureCookie } : {}),
  };
}

function listen(server: ReturnType<typeof createApiServer>, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host.replace(/^\[|\]$/g, ''), () => {
      server.off('error', reject);
      resolve();
    });
  });
}
