/**
 * `berth serve`: loads the config, takes the data dir's lock, starts the controller and serves
 * the HTTP API until SIGINT/SIGTERM.
 * @module
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { launchOptionsOf } from '../../server/dashboard/launch-options.js';
import { DEFAULT_HOST, isLoopbackHost, startServe } from '../../server/serve.js';
import { DEFAULT_API_PORT } from '../../api/index.js';
import { findInstallRoot, loadConfig } from '../../config/index.js';
import { VERSION } from '../../shared/version.js';
import { write } from '../context.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import type { CliContext, ParsedCommand } from '../types.js';
import { createSessionService } from '../controller-factory.js';
import { installLastResort } from '../last-resort.js';
import { metricTargetsOf } from '../../server/metric-targets.js';
import { parsePublicHosts, readTokenFile } from './serve-options.js';
import { leaderSettings, leaseRequest } from './serve-leader.js';

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const portText = (cmd.values.port as string | undefined) ?? ctx.env.BERTH_PORT ?? String(DEFAULT_API_PORT);
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) throw new UsageError('serve: --port must be 0..65535', 'serve');
  const host = (cmd.values.host as string | undefined) ?? DEFAULT_HOST;
  if (!/^(\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:.]+|[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)$/.test(host)) {
    throw new UsageError(`serve: --host must be an IP address or a host name (got ${JSON.stringify(host)})`, 'serve');
  }
  const tls = readTls(cmd);
  const token = readTokenFile(cmd.values['token-file'] as string | undefined, ctx.env);
  const publicHosts = parsePublicHosts(cmd.values['public-host'] as string[] | undefined, ctx.env);
  // TLS here, or at an Ingress in front (--secure-cookie): the dashboard cookie is then Secure.
  const secureCookie = cmd.values['secure-cookie'] === true || tls !== undefined;
  // Validate the config before anything else so a typo is reported without side effects.
  const config = loadConfig({ dataDir: ctx.dataDir, ...(ctx.configPath !== undefined ? { path: ctx.configPath } : {}) });
  const lease = leaseRequest(cmd.values.lease as string | undefined, ctx.env, config);
  const logger = pino({ name: 'berth', level: ctx.env.BERTH_LOG_LEVEL ?? 'info' }, pino.destination(2));
  // a fatal error of the controller after start-up (leadership lost): ends serve like a signal would
  let onFatal: (err: Error) => void = (err) => (earlyFatal ??= err);
  let earlyFatal: Error | undefined;
  const handle = await startServe({
    dataDir: ctx.dataDir,
    port: Number(portText),
    host,
    version: VERSION,
    // The built web app sits beside the CLI bundle (dist/berth.js → dist/web).
    webRoot: join(findInstallRoot(), 'dist', 'web'),
    launchOptions: launchOptionsOf(config),
    // the executor and profile label values /metrics creates up front
    metricTargets: metricTargetsOf(config),
    ...(tls !== undefined ? { tls } : {}),
    ...(token !== undefined ? { token } : {}),
    ...(publicHosts.length > 0 ? { publicHosts } : {}),
    secureCookie,
    logger,
    // What `berth doctor` compares with the file on disk to tell that a restart is needed.
    configSha256: config.sourceSha256 ?? null,
    createService: (svc) => createSessionService({ dataDir: ctx.dataDir, config, logger, ...svc }),
    ...(lease !== null ? { leader: await leaderSettings(lease), onFatal: (err: Error) => onFatal(err) } : {}),
  }).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE') {
      throw new Error(`port ${portText} is in use (another berth serve on another data dir?); pick one with --port N or --port 0`, { cause: err });
    }
    throw err;
  });
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  await write(ctx.io.stdout, `berth serve ${VERSION} listening on ${tls ? 'https' : 'http'}://${shownHost}:${handle.port} (data dir ${ctx.dataDir}; token in ${ctx.dataDir}/state/api-token)\n`);
  await write(ctx.io.stdout, `dashboard: run 'berth dashboard' for a login link\n`);
  if (!isLoopbackHost(host)) {
    await write(
      ctx.io.stderr,
      `warning: --host ${host} is not a loopback address: the API (and the dashboard) is then reachable from the network, protected only by its token and login codes${tls ? '' : ' over plain HTTP'}\n`,
    );
  }
  let uninstall = (): void => undefined;
  const fatal = await new Promise<unknown>((resolve) => {
    const stop = (err?: unknown): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(err);
    };
    const onSignal = (): void => stop();
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    // One connection's failure (or a promise nobody awaited) is logged and serve keeps serving;
    // any other uncaught error shuts it down like a signal would, then fails the command.
    uninstall = installLastResort(process, logger, (err) => stop(err ?? new Error('uncaught error')));
    onFatal = (err) => stop(err);
    if (earlyFatal !== undefined) stop(earlyFatal);
  });
  logger.info({}, 'shutting down (workspaces keep running)');
  try {
    await handle.close();
  } finally {
    uninstall();
  }
  if (fatal !== undefined) throw fatal;
  return ExitCode.ok;
}

/** --tls-cert and --tls-key, read (both or neither). */
function readTls(cmd: ParsedCommand): { cert: string; key: string } | undefined {
  const certFile = cmd.values['tls-cert'];
  const keyFile = cmd.values['tls-key'];
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (typeof certFile !== 'string' || typeof keyFile !== 'string') throw new UsageError('serve: give --tls-cert and --tls-key together', 'serve');
  const read = (flag: string, file: string): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new UsageError(`serve: ${flag} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 'serve');
    }
  };
  return { cert: read('--tls-cert', certFile), key: read('--tls-key', keyFile) };
}
