/**
 * A session's network settings (a profile's `network:` block, issue 23) as every executor reads
 * them: recorded in the session's profile snapshot under {@link NETWORK_SETTING}, so a resume or a
 * replacement keeps the policy the session launched with. Canonical JSON; decoding re-validates.
 * @module
 */
import { z } from 'zod';

/** The key of the profile snapshot's settings that holds the network settings (absent: no policy). */
export const NETWORK_SETTING = 'network';

type EgressMode = 'open' | 'deny' | 'allowlist';

export interface NetworkSettings {
  /**
   * `open`: anything but the blocked addresses; `deny`: nothing but DNS and the egress proxy
   * (whose brokers still work); `allowlist`: the `allow` names, through the egress proxy only.
   */
  egress: EgressMode;
  /** Host names (`api.example.com`, `*.example.com`) or IP literals the proxy lets through (allowlist). */
  allow: readonly string[];
  /** `open` only: whether the cluster's API server addresses stay reachable. */
  allowClusterApi: boolean;
  /** `open` only: whether link-local addresses (the cloud metadata service) stay reachable. */
  allowMetadata: boolean;
  /** Model API providers brokered by the proxy (`anthropic`, `openai`) → the approved secret name holding the key. */
  brokers: Readonly<Record<string, string>>;
}

/** Where an executor's sessions reach Berth's egress proxy. */
export interface EgressProxyTarget {
  /** `http://host:port`, as the agent's HTTPS_PROXY gets it (without a credential). */
  url: string;
  /** The proxy runs as Pods (the chart): their namespace (null: the session's) and labels, for the NetworkPolicy. */
  pods: { namespace: string | null; labels: Readonly<Record<string, string>> } | null;
}

/**
 * The port on a local session's own loopback where agentctl relays to the egress proxy's Unix socket
 * (a sandbox under a network policy has no other network): its HTTPS_PROXY is `127.0.0.1:` this.
 */
export const LOCAL_EGRESS_PORT = 3128;

/**
 * The egress proxy's Unix socket for local sessions: alone in its folder, which the sandbox mounts
 * (a restarted proxy makes a new socket under the same name; nothing else of the data dir shows).
 */
export function egressSocketPath(dataDir: string): string {
  return `${dataDir}/run/egress/egress.sock`;
}

/** Whether sessions under these settings talk to the egress proxy (an allow list or a broker). */
export function usesEgressProxy(n: NetworkSettings): boolean {
  return n.egress === 'allowlist' || Object.keys(n.brokers).length > 0;
}

const SettingsSchema = z.strictObject({
  egress: z.enum(['open', 'deny', 'allowlist']),
  allow: z.array(z.string()),
  allowClusterApi: z.boolean(),
  allowMetadata: z.boolean(),
  brokers: z.record(z.string(), z.string()),
});

/** The canonical JSON of `n` (sorted keys). */
export function encodeNetworkSettings(n: NetworkSettings): string {
  const brokers = Object.fromEntries(Object.entries(n.brokers).sort(([a], [b]) => (a < b ? -1 : 1)));
  return JSON.stringify({ allow: [...n.allow], allowClusterApi: n.allowClusterApi, allowMetadata: n.allowMetadata, brokers, egress: n.egress });
}

/** The settings recorded in a snapshot's `settings`; null when none are (no policy); throws on a corrupt value. */
export function networkSettingsOf(settings: Readonly<Record<string, string>>): NetworkSettings | null {
  const raw = settings[NETWORK_SETTING];
  if (raw === undefined) return null;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error(`the recorded network settings are not valid JSON`);
  }
  const parsed = SettingsSchema.safeParse(json);
  if (!parsed.success) throw new Error(`the recorded network settings have an invalid shape at ${parsed.error.issues[0]?.path.map(String).join('.') || '(root)'}`);
  return parsed.data;
}
