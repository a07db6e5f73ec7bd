/**
 * runtime.env and auth.env (spec §5.4): `KEY='value'` lines the start command sources with
 * auto-export on. runtime.env holds nothing secret; auth.env lives on the memory-backed volume only.
 * The bootstrap nonce is in neither: it is a file of its own that agentctl removes once read, so
 * it is in no process's environment (agentctl is PID 1 of the container).
 * @module
 */
import { ENV } from '../../../protocol/index.js';
import { AGENTCTL_INSTANCE_PORTS, AGENTCTL_PORT, BERTH_ENV } from '../constants.js';
import { ComposeFieldError } from './errors.js';
import type { ResourceIdentity } from './identity.js';
import type { BootstrapPaths } from './paths.js';
import { shQuote } from './shell.js';

const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Which agentctl build runs in the Pod: the bundle under the image's Node >= 18, or the SEA binary. */
export type AgentctlFlavor = 'bundle' | 'sea';

/**
 * Serializes `env` as sourceable lines, keys sorted, values single-quoted (newlines, `$`, backticks
 * and quotes survive literally). Throws a {@link ComposeFieldError} (`env`) for a key that is not a
 * shell name or a value with NUL (the error never shows the value).
 */
export function serializeEnvFile(env: Readonly<Record<string, string>>): string {
  const keys = Object.keys(env).sort();
  let out = '';
  for (const key of keys) {
    if (!ENV_KEY.test(key)) throw new ComposeFieldError('env', `invalid environment key ${JSON.stringify(key)}`);
    const value = env[key] ?? '';
    if (value.includes('\0')) throw new ComposeFieldError(`env.${key}`, 'must not contain NUL bytes');
    out += `${key}=${shQuote(value)}\n`;
  }
  return out;
}

/** The non-secret environment of agentctl (and so of every process it starts). */
export function runtimeEnv(identity: ResourceIdentity, flavor: AgentctlFlavor, paths: BootstrapPaths, passEnv: readonly string[] = []): Record<string, string> {
  return {
    // what the admin's template sets on the main container reaches workspace processes (agentctl
    // passes nothing else of its own environment through beyond the base list)
    ...(passEnv.length > 0 ? { [ENV.passEnv]: [...new Set(passEnv)].sort().join(',') } : {}),
    [ENV.controlPort]: String(AGENTCTL_PORT),
    [ENV.instancePorts]: AGENTCTL_INSTANCE_PORTS,
    // On the workspace volume: process records and output survive a replaced Pod (and `berth logs`
    // of a stopped session can read them). Same directory agentctl would pick by default.
    [ENV.stateDir]: paths.agentctlStateDir,
    [ENV.bootstrapNonceFile]: paths.nonceFile,
    [BERTH_ENV.sessionId]: identity.sessionId,
    [BERTH_ENV.instanceId]: identity.instanceId,
    [BERTH_ENV.workspace]: paths.workspace,
    [BERTH_ENV.agentctlFlavor]: flavor,
  };
}

/**
 * The private environment of agentctl's start: the private HOME. Nothing else is needed there:
 * per-process secrets travel in the agentctl instance create, the nonce in its own file.
 */
export function authEnv(paths: BootstrapPaths): Record<string, string> {
  return { HOME: paths.home };
}

/** The content of the nonce file (see `ENV.bootstrapNonceFile`). */
export function nonceFileContent(bootstrapNonce: string): string {
  if (!/^[A-Za-z0-9_-]{16,512}$/.test(bootstrapNonce)) throw new ComposeFieldError('bootstrapNonce', 'must be 16-512 letters, digits, - or _');
  return `${bootstrapNonce}\n`;
}
