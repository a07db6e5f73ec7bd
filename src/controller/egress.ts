/**
 * A session's side of the egress proxy (issue 23): at each launch or resume of a session whose
 * profile has `network:` settings that use the proxy, a fresh per-session token is minted, only
 * its SHA-256 stored (with the session's allow list and brokers, which is what the proxy reads),
 * and the agent gets the proxy settings as secret environment (delivered like the other secrets:
 * memory-backed, never recorded). A stop or a remove deletes the credential first — the proxy
 * refuses the token from then on — and closes the session's open connections.
 * The model keys a profile brokers are never passed to the agent, even when named.
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { ownValue } from '../shared/own.js';
import type { ExecutorProfileSnapshot } from '../executors/executor.js';
import { INIT_STAGE, LaunchError } from '../executors/launch-kit/index.js';
import { LOCAL_EGRESS_PORT, networkSettingsOf, usesEgressProxy, type NetworkSettings } from '../executors/network.js';
import type { ManagerContext } from './context.js';

/** What the proxy reads from a stored credential's policy (JSON). */
export interface StoredEgressPolicy {
  /** Allow-list entries (empty unless `allowlist`). */
  allow: string[];
  /** Provider → the secret name holding its key (in the proxy's environment). */
  brokers: Record<string, string>;
}

/** Where each provider's SDK takes its base URL and key from. */
const BROKER_ENV: Record<string, { baseUrl: string; key: string; path: string }> = {
  anthropic: { baseUrl: 'ANTHROPIC_BASE_URL', key: 'ANTHROPIC_API_KEY', path: '/broker/anthropic' },
  openai: { baseUrl: 'OPENAI_BASE_URL', key: 'OPENAI_API_KEY', path: '/broker/openai/v1' },
};

/** The digest the store keeps of a token (the proxy looks a token up by it). */
export function egressTokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The recorded network settings of a snapshot, as a launch error when they cannot be read. */
function settingsOf(profile: ExecutorProfileSnapshot): NetworkSettings | null {
  try {
    return networkSettingsOf(profile.settings);
  } catch (err) {
    throw new LaunchError(INIT_STAGE, 'NetworkSettingsInvalid', `${(err as Error).message}: remove the session and launch again`);
  }
}

/**
 * The secret environment of a launch with the egress settings applied: brokered key names taken
 * out, and — when the session uses the proxy — a new credential stored and the proxy variables added.
 */
export async function withEgressEnv(ctx: ManagerContext, sessionId: string, profile: ExecutorProfileSnapshot, secretEnv: Record<string, string>): Promise<Record<string, string>> {
  const settings = settingsOf(profile);
  if (settings === null) return secretEnv;
  const out = { ...secretEnv };
  for (const name of Object.values(settings.brokers)) delete out[name];
  if (!usesEgressProxy(settings)) return out;
  const proxyUrl = proxyUrlOf(ctx, profile);
  const token = await sessionToken(ctx, sessionId, settings);
  const url = new URL(proxyUrl);
  const noProxy = ['localhost', '127.0.0.1', '::1', url.hostname].join(',');
  if (settings.egress === 'allowlist') {
    const withCredential = `http://${encodeURIComponent(sessionId)}:${token}@${url.host}`;
    for (const name of ['HTTPS_PROXY', 'HTTP_PROXY', 'https_proxy', 'http_proxy']) out[name] = withCredential;
  }
  out.NO_PROXY = noProxy;
  out.no_proxy = noProxy;
  for (const provider of Object.keys(settings.brokers)) {
    const env = BROKER_ENV[provider];
    if (env === undefined) continue;
    out[env.baseUrl] = `${url.origin}${env.path}`;
    out[env.key] = token;
  }
  return out;
}

/**
 * The session's token: the stored one while its credential stands (a reconnect or a replacement Pod
 * of a running session keeps it: the agent may hold it), else a new one, stored (encrypted) and
 * recorded (its digest) before any agent gets it.
 */
async function sessionToken(ctx: ManagerContext, sessionId: string, settings: NetworkSettings): Promise<string> {
  const secretId = egressSecretId(sessionId);
  if ((await ctx.store.listSecretIds()).includes(secretId)) {
    const kept = await ctx.store.revealSecret(secretId);
    if ((await ctx.store.findEgressCredential(egressTokenDigest(kept)))?.sessionId === sessionId) return kept;
  }
  const token = randomBytes(32).toString('base64url');
  const policy: StoredEgressPolicy = { allow: settings.egress === 'allowlist' ? [...settings.allow] : [], brokers: { ...settings.brokers } };
  await ctx.store.putSecret(secretId, token);
  const stored = await ctx.store.putEgressCredential({ sessionId, tokenDigest: egressTokenDigest(token), policy: JSON.stringify(policy) });
  if (!stored) throw new LaunchError(INIT_STAGE, 'SessionGone', `session ${sessionId} was removed during its launch`);
  return token;
}

function egressSecretId(sessionId: string): string {
  return `egress-token-${sessionId}`;
}

/** The proxy URL the session's executor gives its agents. */
function proxyUrlOf(ctx: ManagerContext, profile: ExecutorProfileSnapshot): string {
  const executor = ownValue(ctx.config.executors, profile.executor);
  // a local sandbox has only its own loopback: agentctl relays this port to the proxy's socket
  if (profile.type === 'local') return `http://127.0.0.1:${LOCAL_EGRESS_PORT}`;
  if (executor?.type === 'kubernetes' && executor.egressProxy !== null) return executor.egressProxy.url;
  throw new LaunchError(
    INIT_STAGE,
    'EgressProxyMissing',
    `the session's network settings need the egress proxy, and executor '${profile.executor}' has none configured (set executors.${profile.executor}.egress_proxy)`,
  );
}

/** Deletes the session's proxy credential and closes its open connections (stop, suspend, remove). */
export async function revokeEgress(ctx: ManagerContext, sessionId: string): Promise<void> {
  await ctx.store.deleteEgressCredential(sessionId);
  ctx.egressProxy?.revoke(sessionId);
  await ctx.store.deleteSecret(egressSecretId(sessionId));
}
