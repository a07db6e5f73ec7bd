/**
 * What every command gets: resolved global flags, the process's streams and environment, a clock,
 * and a lazily connected API client.
 * @module
 */
import type { BerthClient } from '../api/index.js';
import { resolveDataDir } from '../server/data-dir-path.js';
import { ServeNotRunningError } from './exit-codes.js';
import type { CliContext, CliIo, GlobalFlags } from './types.js';

/** Builds the API client of a data dir's running serve (null when none runs): `clientForDataDir`. */
type ConnectToServe = (dataDir: string) => BerthClient | null;

/** `connect` is passed in so that commands that never talk to serve do not load the client (and zod). */
export function createContext(
  globals: GlobalFlags,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
  interrupted: AbortSignal,
  connect: ConnectToServe,
): CliContext {
  const dataDir = resolveDataDir(globals.dataDir, env);
  let client: BerthClient | undefined;
  return {
    dataDir,
    dataDirFlag: globals.dataDir,
    serverFlag: globals.server,
    configPath: globals.config,
    output: globals.output ?? 'table',
    io,
    env,
    now: () => new Date(),
    client() {
      client ??= connect(dataDir) ?? undefined;
      if (!client) throw new ServeNotRunningError(dataDir);
      return client;
    },
    interrupted,
  };
}

export function write(stream: NodeJS.WritableStream, text: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    if (stream.write(text)) resolve();
    else stream.once('drain', resolve);
  });
}
