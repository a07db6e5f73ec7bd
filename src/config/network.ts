/**
 * `network:` on a profile (issue 23): what its sessions' agents may reach; `egress:` at the top (the
 * egress proxy `berth serve` runs); `egress_proxy:` on a kubernetes executor (where its Pods reach
 * that proxy, which their NetworkPolicy lets through). Resolved here, with errors naming the field.
 * @module
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { parseAllowEntry } from '../egress/index.js';
import type { EgressProxyTarget, NetworkSettings } from '../executors/network.js';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { ENV_NAME } from '../shared/env-name.js';

/** Providers the proxy can broker, and the form of their key header. */
const BROKER_PROVIDERS = ['anthropic', 'openai'] as const;

const labelMap = z.record(z.string(), z.string({ error: 'must be a string' }), { error: 'must be a map of label: value' });

export const NetworkSchema = z.strictObject({
  egress: z.enum(['open', 'deny', 'allowlist'], { error: 'must be open, deny or allowlist' }),
  allow: z.array(z.unknown(), { error: 'must be a list of host names' }).optional(),
  allow_cluster_api: z.boolean({ error: 'must be true or false' }).optional(),
  allow_metadata: z.boolean({ error: 'must be true or false' }).optional(),
  brokers: z.record(z.string(), z.string({ error: 'must be the name of an approved secret (secret_env)' }), { error: 'must be a map of provider: SECRET_NAME' }).optional(),
});

export const EgressServeSchema = z.strictObject({
  /** host:port the proxy listens on for Pods (TCP). */
  listen: z.string({ error: 'must be host:port' }).optional(),
  /** Static addresses for names the proxy connects to (a hosts file of its own). */
  hosts: z.record(z.string(), z.string({ error: 'must be an IP address' }), { error: 'must be a map of name: address' }).optional(),
  brokers: z.record(z.string(), z.strictObject({ upstream: z.string({ error: 'must be an https URL' }) }), { error: 'must be a map of provider: {upstream}' }).optional(),
  /** A PEM file of extra CAs trusted for broker upstreams. */
  ca_file: z.string({ error: 'must be a path' }).optional(),
});

export const EgressProxyEndpointSchema = z.strictObject({
  url: z.string({ error: 'must be an http URL' }),
  namespace: z.string({ error: 'must be a namespace' }).optional(),
  pod_labels: labelMap.optional(),
});

/** Where a kubernetes executor's Pods reach the egress proxy. */
export type EgressProxyEndpoint = EgressProxyTarget;

/** The `egress:` block `berth serve` runs its proxy from. */
export interface EgressServeConfig {
  listen: { host: string; port: number } | null;
  hosts: Record<string, string>;
  brokers: Record<string, { upstream: string }>;
  caFile: string | null;
}

/** A profile's `network:` resolved; `approved` are the secret names its launches may pass. */
export function resolveNetwork(raw: z.infer<typeof NetworkSchema> | undefined, field: string, approved: readonly string[], source: string | null): NetworkSettings | undefined {
  if (raw === undefined) return undefined;
  if (raw.allow !== undefined && raw.egress !== 'allowlist') throw new ConfigFieldError(`${field}.allow`, `is only allowed with egress: allowlist (this profile says ${raw.egress})`, source);
  if (raw.egress === 'allowlist' && (raw.allow === undefined || raw.allow.length === 0)) {
    throw new ConfigFieldError(`${field}.allow`, 'must list at least one host name for egress: allowlist (or use egress: deny)', source);
  }
  for (const key of ['allow_cluster_api', 'allow_metadata'] as const) {
    if (raw[key] !== undefined && raw.egress !== 'open') throw new ConfigFieldError(`${field}.${key}`, `is only allowed with egress: open (with ${raw.egress} nothing but the proxy is reachable)`, source);
  }
  const allow = (raw.allow ?? []).map((entry, i) => {
    try {
      parseAllowEntry(entry, `${field}.allow[${String(i)}]`);
    } catch (err) {
      if (err instanceof ConfigFieldError) throw new ConfigFieldError(err.path, err.detail, source);
      throw err;
    }
    return (entry as string).trim().toLowerCase();
  });
  const brokers: Record<string, string> = {};
  for (const [provider, secret] of Object.entries(raw.brokers ?? {})) {
    const at = `${field}.brokers.${provider}`;
    if (!(BROKER_PROVIDERS as readonly string[]).includes(provider)) throw new ConfigFieldError(at, `is not a provider Berth brokers (${BROKER_PROVIDERS.join(', ')})`, source);
    if (!ENV_NAME.test(secret)) throw new ConfigFieldError(at, 'must be an environment variable name', source);
    if (!approved.includes(secret)) throw new ConfigFieldError(at, `${secret} must be approved in the profile's or its executor's secret_env (the proxy reads the key from berth serve's environment)`, source);
    brokers[provider] = secret;
  }
  return { egress: raw.egress, allow: [...new Set(allow)], allowClusterApi: raw.allow_cluster_api ?? false, allowMetadata: raw.allow_metadata ?? false, brokers };
}

/** An executor's `egress_proxy:` resolved. */
export function resolveEgressProxyEndpoint(raw: z.infer<typeof EgressProxyEndpointSchema> | undefined, field: string, source: string | null): EgressProxyEndpoint | null {
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw.url);
  } catch {
    throw new ConfigFieldError(`${field}.url`, 'must be an http URL such as http://10.0.0.1:3128', source);
  }
  if (url.protocol !== 'http:' || url.port === '' || url.username !== '' || url.password !== '' || (url.pathname !== '/' && url.pathname !== '')) {
    throw new ConfigFieldError(`${field}.url`, 'must be http://host:port with no credential or path', source);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (raw.pod_labels === undefined && isIP(host) === 0) {
    throw new ConfigFieldError(`${field}.url`, 'must name the proxy by IP address unless pod_labels say which Pods serve it (the NetworkPolicy lets exactly that through)', source);
  }
  if (raw.namespace !== undefined && raw.pod_labels === undefined) throw new ConfigFieldError(`${field}.namespace`, 'is only allowed with pod_labels', source);
  if (raw.pod_labels !== undefined && Object.keys(raw.pod_labels).length === 0) throw new ConfigFieldError(`${field}.pod_labels`, 'must have at least one label', source);
  return {
    url: `http://${url.host}`,
    pods: raw.pod_labels === undefined ? null : { namespace: raw.namespace ?? null, labels: { ...raw.pod_labels } },
  };
}

/** The top-level `egress:` resolved (defaults: no TCP listener, no hosts, the providers' own APIs). */
export function resolveEgressServe(raw: z.infer<typeof EgressServeSchema> | undefined, source: string | null, resolvePath: (p: string) => string): EgressServeConfig {
  const out: EgressServeConfig = { listen: null, hosts: {}, brokers: {}, caFile: null };
  if (raw === undefined) return out;
  if (raw.listen !== undefined) {
    const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+):(\d{1,5})$/i.exec(raw.listen.trim());
    const port = Number(m?.[2]);
    if (m === null || !(port >= 1 && port <= 65535)) throw new ConfigFieldError('egress.listen', 'must be host:port, e.g. 10.0.0.1:3128 or 0.0.0.0:3128', source);
    out.listen = { host: m[1]!.replace(/^\[|\]$/g, ''), port };
  }
  for (const [name, address] of Object.entries(raw.hosts ?? {})) {
    if (isIP(address) === 0) throw new ConfigFieldError(`egress.hosts.${name}`, 'must be an IP address', source);
    out.hosts[name.toLowerCase()] = address;
  }
  for (const [provider, b] of Object.entries(raw.brokers ?? {})) {
    if (!(BROKER_PROVIDERS as readonly string[]).includes(provider)) throw new ConfigFieldError(`egress.brokers.${provider}`, `is not a provider Berth brokers (${BROKER_PROVIDERS.join(', ')})`, source);
    let u: URL | null = null;
    try {
      u = new URL(b.upstream);
    } catch {
      u = null;
    }
    if (u?.protocol !== 'https:' || u.username !== '' || u.password !== '') throw new ConfigFieldError(`egress.brokers.${provider}.upstream`, 'must be an https URL with no credential', source);
    out.brokers[provider] = { upstream: u.href.replace(/\/$/, '') };
  }
  if (raw.ca_file !== undefined) out.caFile = resolvePath(raw.ca_file);
  return out;
}
