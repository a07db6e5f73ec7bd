/**
 * `berth doctor` checks of the config in use: that the running `berth serve` loaded the config file
 * as it is now (serve reads it only at start). The agents' checks are in doctor-agents.ts.
 * @module
 */
import { readFileSync } from 'node:fs';
import { configTextSha256, type ResolvedConfig } from '../../config/index.js';
import type { Check } from '../types.js';

/** sha256 of the config file as it is on disk now, or null when the config is the built-in defaults. */
function currentConfigSha256(config: ResolvedConfig): string | null {
  if (config.source === null) return null;
  try {
    return configTextSha256(readFileSync(config.source, 'utf8'));
  } catch {
    return config.sourceSha256 ?? null;
  }
}

/**
 * Compares the config serve reported at start (`served`, from /health: undefined when serve is too
 * old to say) with the file now. A mismatch means edits are not in effect until serve restarts.
 */
export function checkServeConfig(served: string | null | undefined, config: ResolvedConfig | null, restartHint: string): Check | null {
  if (served === undefined || config === null) return null;
  const now = currentConfigSha256(config);
  if (served === now) return { name: 'serve config', ok: true, detail: now === null ? 'built-in defaults, as berth serve uses' : `berth serve runs with ${config.source} as it is now` };
  const detail =
    now === null
      ? 'berth serve started with a config file that is gone now (it keeps using what it read)'
      : served === null
        ? `${config.source} was created after berth serve started (it runs on the built-in defaults)`
        : `${config.source} changed since berth serve started (it keeps using the old config)`;
  return { name: 'serve config', ok: false, detail, fix: `restart berth serve to apply it: ${restartHint}` };
}
