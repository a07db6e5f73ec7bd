/**
 * `berth serve`: loads the config, takes the data dir's lock, starts the controller and serves
 * the HTTP API until SIGINT/SIGTERM.
 * @module
 */
import { pino } from 'pino';
import { startServe } from '../../api/serve.js';
import { DEFAULT_API_PORT } from '../../api/routes.js';
import { loadConfig } from '../../config/index.js';
import type { SessionService } from '../../controller/service.js';
import { VERSION } from '../../shared/version.js';
import { write, type CliContext } from '../context.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import type { ParsedCommand } from '../registry.js';
import { createSessionService } from '../controller-factory.js';

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const portText = (cmd.values.port as string | undefined) ?? ctx.env.BERTH_PORT ?? String(DEFAULT_API_PORT);
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) throw new UsageError('serve: --port must be 0..65535', 'serve');
  // Validate the config before anything else so a typo is reported without side effects.
  const config = loadConfig({ dataDir: ctx.dataDir, ...(ctx.configPath !== undefined ? { path: ctx.configPath } : {}) });
  const logger = pino({ name: 'berth', level: ctx.env.BERTH_LOG_LEVEL ?? 'info' }, pino.destination(2));
  const handle = await startServe({
    dataDir: ctx.dataDir,
    port: Number(portText),
    version: VERSION,
    logger,
    createService: (): Promise<SessionService> => createSessionService({ dataDir: ctx.dataDir, config, logger }),
  }).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE') {
      throw new Error(`port ${portText} is in use (another berth serve on another data dir?); pick one with --port N or --port 0`, { cause: err });
    }
    throw err;
  });
  await write(ctx.io.stdout, `berth serve ${VERSION} listening on http://127.0.0.1:${handle.port} (data dir ${ctx.dataDir}; token in ${ctx.dataDir}/api-token)\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  logger.info({}, 'shutting down (workspaces keep running)');
  await handle.close();
  return ExitCode.ok;
}
