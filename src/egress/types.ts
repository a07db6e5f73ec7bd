/**
 * The egress proxy's ports (what it needs from the rest of Berth) and its record shape.
 * @module
 */

/** A credential from `Proxy-Authorization`: Basic gives `username` (the session) and `token`, Bearer only `token`. */
export interface ProxyCredential {
  readonly username: string | null;
  readonly token: string;
}

/** A session the credential belongs to, with its allow list and the broker providers it may use. */
export interface EgressSession {
  readonly sessionId: string;
  /** Whether the session may reach `host` (lower case, no trailing dot; IP literals unbracketed). */
  allow(host: string): boolean;
  /** The credential-broker providers (names of the proxy's `brokers` option) the session may call. */
  readonly brokers: ReadonlySet<string>;
}

/**
 * The sessions port. `lookup` answers null for an unknown or revoked credential (compare tokens in
 * constant time). Revoking a session is two steps for the caller: make `lookup` answer null, then
 * call the proxy's `revoke(sessionId)`, which closes the session's open tunnels and requests.
 */
export interface EgressSessions {
  lookup(credential: ProxyCredential): EgressSession | null | Promise<EgressSession | null>;
}

/** Why a connection was denied or ended early; absent for a connection that was allowed and ended normally. */
export type EgressReason =
  | 'no_credential' // 407: no Proxy-Authorization (401 on the broker: no API key)
  | 'bad_credential' // 407: unknown, revoked or malformed credential (401 on the broker)
  | 'bad_request' // 400: no routable target
  | 'not_allowed' // 403: the host is not on the session's allow list
  | 'ip_literal' // 403: an address no allow entry names exactly
  | 'blocked_address' // 403: the destination resolved to an address `blockAddress` refuses (metadata, loopback, …)
  | 'unknown_provider' // 404: a broker request for a provider the proxy has not configured
  | 'provider_not_allowed' // 403: a broker request for a provider the session may not use
  | 'provider_unconfigured' // 503: the broker provider's key is not set
  | 'sni_mismatch' // tunnel closed: the ClientHello names another host than CONNECT
  | 'no_sni' // tunnel closed: a ClientHello without server_name to a named host
  | 'not_tls' // tunnel closed: no TLS on port 443
  | 'bad_client_hello' // tunnel closed: a malformed or oversized ClientHello
  | 'upgrade_unsupported' // 501: Upgrade over plain HTTP (use CONNECT)
  | 'upstream_unreachable' // 502: connecting upstream failed
  | 'upstream_timeout' // 504: connecting upstream took longer than connectTimeoutMs
  | 'upstream_error' // the upstream failed mid-transfer
  | 'client_error' // the client went away mid-transfer
  | 'idle_timeout' // nothing moved for idleTimeoutMs
  | 'revoked' // the session was revoked while the connection was open
  | 'proxy_closed'; // the proxy was closed while the connection was open

/** One connection (CONNECT tunnel) or one plain-HTTP request. */
export interface EgressRecord {
  /** Null when the request carried no valid credential. */
  readonly sessionId: string | null;
  /** The destination host ('' when it could not be parsed). */
  readonly host: string;
  readonly port: number;
  readonly method: string;
  /** The policy's decision; an allowed connection may still end with a `reason` (e.g. `upstream_unreachable`). */
  readonly allowed: boolean;
  readonly reason?: EgressReason;
  /** The status the proxy answered (407, 403, …) or relayed from upstream; 200 for an established tunnel. */
  readonly status?: number;
  /** Bytes written to the upstream connection (headers included for plain HTTP). */
  readonly bytesUp: number;
  /** Bytes read from the upstream connection. */
  readonly bytesDown: number;
  /** Epoch milliseconds. */
  readonly startedAt: number;
  readonly endedAt: number;
  /**
   * For a credential-broker request (`/broker/<provider>/…`): the provider named in the path and the
   * token usage the API reported (null when not reported, unreadable or the request failed).
   */
  readonly broker?: { readonly provider: string; readonly inputTokens: number | null; readonly outputTokens: number | null };
}

/** The record port: called once per connection or request, when it ends. It must not throw. */
export type EgressRecorder = (record: EgressRecord) => void;

/**
 * Where to connect for a destination (tests map names to loopback ports; default: the name itself).
 * What it returns is resolved by DNS (unless an address) and checked by `BlockAddress`.
 */
export type ResolveUpstream = (host: string, port: number) => { host: string; port: number };

/**
 * True for an address the proxy must not connect to (IPv4 dotted or IPv6 text, as `dns.lookup`
 * gives it), for the session whose request it is (a per-session exception, e.g. a profile allowed
 * the metadata service, can look at `sessionId`).
 */
export type BlockAddress = (ip: string, sessionId: string) => boolean;

/** One model API the credential broker forwards to (`/broker/<name>/…`). */
export interface BrokerProvider {
  /** The API's `https://` base URL; the path after `/broker/<name>` is appended to its path. */
  readonly upstream: string;
  /** How the key is sent: `x-api-key: KEY` (Anthropic) or `Authorization: Bearer KEY` (OpenAI). */
  readonly auth: 'x-api-key' | 'bearer';
  /** The API key, read at each request; undefined (or '') answers 503 until it is set. */
  key(): string | undefined;
}
