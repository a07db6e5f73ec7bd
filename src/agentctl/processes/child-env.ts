/**
 * The environment a workspace process starts with.
 * @module
 */

/**
 * agentctl's own environment minus every `AGENTCTL_*` variable, then the instance env, then the
 * process env. Dropping `AGENTCTL_BOOTSTRAP_NONCE` matters: a process that could read it might win
 * the handshake race after an agentctl restart.
 */
export function childEnv(
  base: Readonly<Record<string, string | undefined>>,
  instanceEnv: Readonly<Record<string, string>>,
  processEnv: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && !key.startsWith('AGENTCTL_')) env[key] = value;
  }
  return { ...env, ...instanceEnv, ...processEnv };
}
