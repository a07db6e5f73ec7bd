/**
 * Reading the session credential from `Proxy-Authorization`. Pure. Credentials never appear in
 * errors, records or replies.
 * @module
 */
import type { ProxyCredential } from './types.js';

/** The `Proxy-Authenticate` challenge sent with every 407. */
export const PROXY_AUTHENTICATE = 'Basic realm="berth-egress"';

type CredentialResult =
  | { readonly kind: 'none' }
  | { readonly kind: 'malformed' }
  | { readonly kind: 'credential'; readonly credential: ProxyCredential };

/** The credential of a `Proxy-Authorization` header: `Basic base64(session:token)` or `Bearer token`. */
export function parseProxyAuthorization(header: string | string[] | undefined): CredentialResult {
  if (header === undefined) return { kind: 'none' };
  if (Array.isArray(header) || header.length > 4096) return { kind: 'malformed' };
  const m = /^\s*(\S+)\s+(\S+)\s*$/.exec(header);
  if (m === null) return { kind: 'malformed' };
  const scheme = m[1]!.toLowerCase();
  const value = m[2]!;
  if (scheme === 'bearer') return { kind: 'credential', credential: { username: null, token: value } };
  if (scheme !== 'basic' || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return { kind: 'malformed' };
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon === decoded.length - 1) return { kind: 'malformed' };
  return { kind: 'credential', credential: { username: decoded.slice(0, colon), token: decoded.slice(colon + 1) } };
}
