/**
 * The environment a workspace process starts with: a documented base taken from agentctl's own
 * environment, then the instance env, then the process env. Nothing else of agentctl's environment
 * is passed through, so a secret the controller or a Pod happens to carry reaches no agent unless
 * it was approved (instance env) or named in `AGENTCTL_PASS_ENV`.
 * @module
 */
import { CHILD_BASE_ENV, CHILD_BASE_ENV_PREFIXES, ENV } from '../../protocol/index.js';
import { ENV_NAME } from '../../shared/env-name.js';

const BASE_NAMES: ReadonlySet<string> = new Set(CHILD_BASE_ENV);

/** True for a name of the base environment (`PATH`, `HOME`, `LC_*` …). */
function isBaseEnvName(name: string): boolean {
  return BASE_NAMES.has(name) || CHILD_BASE_ENV_PREFIXES.some((p) => name.startsWith(p));
}

/**
 * Parses an `AGENTCTL_PASS_ENV` value: comma-separated variable names, blanks ignored. Returns the
 * names, or the first bad entry as `{ invalid }` (the caller turns it into its own error).
 * `AGENTCTL_*` names are refused: the nonce and agentctl's settings never reach a child.
 */
export function parsePassEnv(raw: string | undefined): { names: string[] } | { invalid: string; why: string } {
  const names: string[] = [];
  for (const part of (raw ?? '').split(',')) {
    const name = part.trim();
    if (name === '') continue;
    if (!ENV_NAME.test(name)) return { invalid: name, why: 'is not a valid environment variable name' };
    if (name.startsWith('AGENTCTL_')) return { invalid: name, why: 'is reserved (AGENTCTL_* variables never reach workspace processes)' };
    names.push(name);
  }
  return { names };
}

/**
 * What a child inherits of agentctl's environment `base`: the base names and those listed in its
 * `AGENTCTL_PASS_ENV` (validated at start-up by the config; an invalid list passes nothing extra).
 */
export function inheritedEnv(base: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const parsed = parsePassEnv(base[ENV.passEnv]);
  const passed = new Set('names' in parsed ? parsed.names : []);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value === undefined || key.startsWith('AGENTCTL_')) continue;
    if (isBaseEnvName(key) || passed.has(key)) env[key] = value;
  }
  return env;
}

/**
 * The env of a workspace process: {@link inheritedEnv} of agentctl's environment, then the instance
 * env, then the process env. Dropping `AGENTCTL_BOOTSTRAP_NONCE` matters: a process that could read
 * it might win the handshake race after an agentctl restart; it is dropped even from the layers on
 * top, so no request can smuggle an `AGENTCTL_*` value into a child.
 */
export function childEnv(
  base: Readonly<Record<string, string | undefined>>,
  instanceEnv: Readonly<Record<string, string>>,
  processEnv: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = { ...inheritedEnv(base), ...instanceEnv, ...processEnv };
  for (const key of Object.keys(env)) if (key.startsWith('AGENTCTL_')) delete env[key];
  return env;
}
