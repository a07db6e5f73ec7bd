/**
 * The two checks every proxied request passes: whose credential it carries, and whether that
 * session may reach the target. Answers a denial (status, reason, a short text for the client) or
 * the session; the text never repeats the credential.
 * @module
 */
import { parseProxyAuthorization } from './auth.js';
import { isIpLiteral, normalizeHost } from './policy.js';
import type { ClientHelloPeek } from './sni.js';
import type { Target } from './target.js';
import type { EgressReason, EgressSession, EgressSessions } from './types.js';

export interface Denial {
  readonly status: 400 | 401 | 403 | 404 | 407 | 501 | 502 | 503 | 504;
  readonly reason: EgressReason;
  readonly message: string;
}

/** The session of a `Proxy-Authorization` header, or a 407 denial. */
export async function authenticate(sessions: EgressSessions, header: string | string[] | undefined): Promise<EgressSession | Denial> {
  const parsed = parseProxyAuthorization(header);
  if (parsed.kind === 'none') return { status: 407, reason: 'no_credential', message: 'proxy credential required' };
  if (parsed.kind === 'malformed') return { status: 407, reason: 'bad_credential', message: 'proxy credential not accepted' };
  let session: EgressSession | null;
  try {
    session = await sessions.lookup(parsed.credential);
  } catch {
    session = null;
  }
  return session ?? { status: 407, reason: 'bad_credential', message: 'proxy credential not accepted' };
}

/** Null when the session may reach the target, else the 403 denial. */
export function authorize(session: EgressSession, target: Target): Denial | null {
  if (session.allow(target.host)) return null;
  if (isIpLiteral(target.host)) return { status: 403, reason: 'ip_literal', message: `${target.host} is an IP address no allow entry names` };
  return { status: 403, reason: 'not_allowed', message: `${target.host} is not on this session's allow list` };
}

export const isDenial = (v: EgressSession | Denial): v is Denial => 'status' in v;

/**
 * The rule for a tunnel's first client bytes, once the CONNECT is admitted:
 * - a TLS ClientHello must name the CONNECT host in its SNI (case-insensitive, trailing dot ignored),
 *   on every port; without SNI it passes only when the CONNECT host is an IP literal (SNI cannot carry
 *   an address) and is refused as `no_sni` otherwise;
 * - bytes that are not TLS are refused on port 443 (`not_tls`) and pass on other ports (ssh, git,
 *   databases: the destination is still the allowed name's address, resolved by the proxy);
 * - a malformed or oversized ClientHello is refused on every port.
 * Null when the tunnel may proceed, else the reason to close it.
 */
export function judgeFirstBytes(peek: ClientHelloPeek, target: Target): EgressReason | null {
  switch (peek.kind) {
    case 'hello':
      if (peek.serverName === null) return isIpLiteral(target.host) ? null : 'no_sni';
      return normalizeHost(peek.serverName) === target.host ? null : 'sni_mismatch';
    case 'not-tls':
      return target.port === 443 ? 'not_tls' : null;
    case 'invalid':
    case 'incomplete':
      return 'bad_client_hello';
  }
}
