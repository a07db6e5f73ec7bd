/**
 * What the CONNECT and plain-HTTP paths share before any byte goes upstream: the proxy's context,
 * admission (credential, target, allow list, registration for revocation) and opening the upstream
 * connection under the connect timeout, to an address `blockAddress` accepts.
 * @module
 */
import { lookup } from 'node:dns/promises';
import { once } from 'node:events';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { checkServerIdentity, connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { authenticate, authorize, isDenial, type Denial } from './gate.js';
import type { ConnectionRegistry, OpenConnection } from './registry.js';
import { BadTargetError, type Target } from './target.js';
import type { BlockAddress, BrokerProvider, EgressRecorder, EgressSessions, ResolveUpstream } from './types.js';

export interface ProxyContext {
  readonly sessions: EgressSessions;
  readonly record: EgressRecorder;
  readonly registry: ConnectionRegistry;
  readonly connectTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly resolveUpstream: ResolveUpstream;
  readonly blockAddress: BlockAddress;
  readonly brokers: Readonly<Record<string, BrokerProvider>>;
  /** Extra trusted CA certificates for the brokers' upstream TLS (replacing the default roots). */
  readonly upstreamCa: string | Buffer | undefined;
  readonly now: () => number;
}

type Admission =
  | { readonly ok: true; readonly sessionId: string; readonly target: Target }
  | { readonly ok: false; readonly sessionId: string | null; readonly target: Target | null; readonly denial: Denial };

/**
 * Authenticates, parses the target (`parseTarget` may throw BadTargetError: a 400), checks the allow
 * list and registers `conn` under the session.
 */
export async function admit(
  ctx: ProxyContext,
  header: string | string[] | undefined,
  parseTarget: () => Target,
  conn: OpenConnection,
): Promise<Admission> {
  const ticket = ctx.registry.begin();
  try {
    const session = await authenticate(ctx.sessions, header);
    if (isDenial(session)) return { ok: false, sessionId: null, target: null, denial: session };
    let target: Target;
    try {
      target = parseTarget();
    } catch (err) {
      if (!(err instanceof BadTargetError)) throw err;
      return { ok: false, sessionId: session.sessionId, target: null, denial: { status: 400, reason: 'bad_request', message: err.message } };
    }
    const denial = authorize(session, target);
    if (denial !== null) return { ok: false, sessionId: session.sessionId, target, denial };
    if (!ctx.registry.add(session.sessionId, conn, ticket)) {
      return { ok: false, sessionId: session.sessionId, target, denial: { status: 407, reason: 'bad_credential', message: 'proxy credential not accepted' } };
    }
    return { ok: true, sessionId: session.sessionId, target };
  } finally {
    ctx.registry.end();
  }
}

/** Thrown by `connectUpstream`; `timeout` tells a 504 from a 502. */
class UpstreamConnectError extends Error {
  override readonly name = 'UpstreamConnectError';
  constructor(readonly timeout: boolean) {
    super(timeout ? 'upstream connect timed out' : 'upstream unreachable');
  }
}

/** Thrown by `connectUpstream` when the destination resolved to an address `blockAddress` refuses: a 403. */
class BlockedAddressError extends Error {
  override readonly name = 'BlockedAddressError';
  constructor() {
    super('the destination resolves to an address the proxy does not connect to');
  }
}

/** The denial for an error of `connectUpstream`. */
export function connectDenial(err: unknown): Denial {
  if (err instanceof BlockedAddressError) return { status: 403, reason: 'blocked_address', message: err.message };
  if (err instanceof UpstreamConnectError && err.timeout) return { status: 504, reason: 'upstream_timeout', message: 'upstream connect timed out' };
  return { status: 502, reason: 'upstream_unreachable', message: 'upstream unreachable' };
}

/**
 * A connection to `host:port` within `connectTimeoutMs` (DNS, TCP and a TLS handshake included):
 * `resolveUpstream` maps the destination, the proxy resolves what it answers (dns.lookup, every
 * address), refuses it when `blockAddress` refuses any of the addresses, and connects to the first
 * checked address (so no second lookup can rebind the name). With `tls`, the handshake runs with
 * the destination's name as SNI and for certificate verification.
 * @throws BlockedAddressError | UpstreamConnectError
 */
export async function connectUpstream(ctx: ProxyContext, sessionId: string, host: string, port: number, tls?: ConnectionOptions): Promise<Socket> {
  const to = ctx.resolveUpstream(host, port);
  let timer: NodeJS.Timeout | undefined;
  let socket: Socket | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UpstreamConnectError(true)), ctx.connectTimeoutMs);
    timer.unref();
  });
  try {
    const addresses = await Promise.race([resolveAll(to.host), timedOut]);
    if (addresses.length === 0) throw new UpstreamConnectError(false);
    if (addresses.some((a) => ctx.blockAddress(a, sessionId))) throw new BlockedAddressError();
    const address = addresses[0]!;
    socket =
      tls === undefined
        ? netConnect({ host: address, port: to.port, noDelay: true })
        : tlsConnect({ ...tls, host: address, port: to.port, ...(isIP(host) === 0 ? { servername: host } : {}), checkServerIdentity: (_, cert) => checkServerIdentity(host, cert) }).setNoDelay(true);
    const ready = once(socket, tls === undefined ? 'connect' : 'secureConnect').catch(() => {
      throw new UpstreamConnectError(false);
    });
    ready.catch(ignore); // an error after the timeout won: handled
    await Promise.race([ready, timedOut]);
    socket.on('error', ignore); // the caller's pipeline sees errors from here on
    return socket;
  } catch (err) {
    socket?.destroy();
    throw err instanceof BlockedAddressError || err instanceof UpstreamConnectError ? err : new UpstreamConnectError(false);
  } finally {
    clearTimeout(timer);
    timedOut.catch(ignore);
  }
}

/** The addresses of `host` (itself when it is one). */
async function resolveAll(host: string): Promise<string[]> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare) !== 0) return [bare];
  try {
    return (await lookup(bare, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    throw new UpstreamConnectError(false);
  }
}

const ignore = (): void => undefined;

/** The raw HTTP/1.1 reply a denied CONNECT or Upgrade gets, ending with Connection: close. */
export function rawReply(denial: Denial, extraHeaders: Record<string, string> = {}): string {
  const body = `${denial.message}\n`;
  const headers = {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
    ...extraHeaders,
  };
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  return `HTTP/1.1 ${String(denial.status)} ${STATUS_TEXT[denial.status]}\r\n${lines.join('')}\r\n${body}`;
}

const STATUS_TEXT: Record<Denial['status'], string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  407: 'Proxy Authentication Required',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};
