/**
 * `berth doctor` checks of the config in use: that the running `berth serve` loaded the config file
 * as it is now (serve reads it only at start), and that each agent's command can be found.
 * @module
 */
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { AGENTCTL_PLACEHOLDER, configTextSha256, type ResolvedConfig } from '../../config/index.js';
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

/** Where `command` is found: itself when it has a `/`, else the first executable file on `path`. */
function findExecutable(command: string, path: string | undefined): string | null {
  const executable = (file: string): boolean => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes('/')) return executable(command) ? command : null;
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const file = join(dir, command);
    if (executable(file)) return file;
  }
  return null;
}

/** One check per agent profile: its program exists (looked up on this PATH, like berth serve's agents). */
export function checkAgentCommands(config: ResolvedConfig | null, path: string | undefined): Check[] {
  if (config === null) return [];
  return Object.values(config.agents).map((agent) => {
    const name = `agent ${agent.name}`;
    const program = agent.command[0] ?? '';
    if (program === AGENTCTL_PLACEHOLDER) return { name, ok: true, detail: 'built into agentctl' };
    const found = findExecutable(program, path);
    return found !== null
      ? { name, ok: true, detail: found }
      : {
          name,
          ok: false,
          detail: `'${program}' is not ${program.includes('/') ? 'an executable file' : 'on PATH'}`,
          fix: `install it, or correct agents.${agent.name}.command in ${config.source ?? 'berth.yaml'}`,
        };
  });
}
