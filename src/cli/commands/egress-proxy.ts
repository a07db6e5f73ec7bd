/**
 * `berth egress-proxy`: Berth's egress proxy as a process of its own (the chart's proxy Deployment),
 * beside the controller and sharing its inventory (Postgres): sessions are found by their tokens'
 * digests there, and their connections recorded there. `berth serve` runs the same proxy itself when
 * berth.yaml sets `egress.listen`. Runs until SIGINT/SIGTERM.
 * @module
 */
import { pino } from 'pino';
import { loadConfig } from '../../config/index.js';
import { metadataKeyPrefixes, startEgressProxy } from '../../controller/index.js';
import { openInventory } from '../../inventory/index.js';
import { write } from '../context.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import type { CliContext, ParsedCommand } from '../types.js';

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const loaded = loadConfig({ dataDir: ctx.dataDir, ...(ctx.configPath !== undefined ? { path: ctx.configPath } : {}) });
  const listenText = (cmd.values.listen as string | undefined) ?? null;
  let listen = loaded.egress.listen;
  if (listenText !== null) {
    const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+):(\d{1,5})$/i.exec(listenText.trim());
    const port = Number(m?.[2]);
    if (m === null || !(port >= 0 && port <= 65535)) throw new UsageError('egress-proxy: --listen must be host:port (e.g. 0.0.0.0:3128; port 0: any free port)', 'egress-proxy');
    listen = { host: m[1]!.replace(/^\[|\]$/g, ''), port };
  }
  if (listen === null) throw new UsageError('egress-proxy: say where to listen: --listen host:port, or egress.listen in berth.yaml', 'egress-proxy');
  const config = { ...loaded, egress: { ...loaded.egress, listen } };
  const logger = pino({ name: 'berth-egress', level: ctx.env.BERTH_LOG_LEVEL ?? 'info' }, pino.destination(2));
  const store = await openInventory({ dataDir: ctx.dataDir, store: config.store, env: ctx.env, metadataKeyPrefixes: metadataKeyPrefixes() });
  const secretSource = (name: string): string | undefined => (Object.hasOwn(ctx.env, name) ? ctx.env[name] : undefined);
  let proxy;
  try {
    proxy = await startEgressProxy(config, store, secretSource, logger);
  } catch (err) {
    await store.close();
    throw err;
  }
  await write(ctx.io.stdout, `berth egress-proxy listening on ${listen.host}:${proxy?.port ?? listen.port} (inventory: ${store.backend})\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await proxy?.close();
  await store.close();
  return ExitCode.ok;
}
