/**
 * Where the data dir is. Apart from data-dir.ts (which needs zod for serve.json) so that a CLI
 * command that never talks to `berth serve` (version, openapi) starts without loading zod.
 * @module
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Resolves the data dir: the flag, then $BERTH_DATA_DIR, then ~/.local/share/berth (absolute). */
export function resolveDataDir(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  if (flag) return resolve(flag);
  if (env.BERTH_DATA_DIR) return resolve(env.BERTH_DATA_DIR);
  return join(env.HOME || homedir(), '.local', 'share', 'berth');
}
