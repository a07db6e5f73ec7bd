/**
 * The Berth egress proxy: an HTTP server that speaks CONNECT (tunnels, SNI-checked) and plain HTTP
 * (absolute-form requests), authenticating every request by its session's proxy credential and
 * recording every connection through the `record` port. Origin-form requests under `/broker/` go
 * to the credential broker (broker.ts: model APIs without the agent holding their keys); other
 * origin-form requests are refused as before (407 without a credential, else 400). Every upstream
 * address passes `blockAddress` first (address.ts).
 *
 * Revocation: the caller makes `sessions.lookup` answer null for the credential (new requests get
 * 407), then calls `revoke(sessionId)`, which closes the session's open tunnels and requests at once
 * (recorded with reason `revoked`). Memory per connection is bounded by the streams' high-water marks
 * plus the ClientHello peek (`MAX_CLIENT_HELLO_BYTES`); `stats()` reports what is held.
 * @module
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { defaultBlockAddress } from './address.js';
import { rawReply, type ProxyContext } from './admit.js';
import { checkBrokers, handleBroker, isBrokerRequest } from './broker.js';
import { handleRequest } from './forward.js';
import { ConnectionRegistry, type ProxyStats } from './registry.js';
import { handleConnect } from './tunnel.js';
import type { BlockAddress, BrokerProvider, EgressRecorder, EgressSessions, ResolveUpstream } from './types.js';
import type { Socket } from 'node:net';

interface EgressProxyOptions {
  readonly sessions: EgressSessions;
  readonly record: EgressRecorder;
  /** How long connecting upstream (DNS included) may take before a 504. */
  readonly connectTimeoutMs: number;
  /** How long a connection may move no byte before it is closed (either side). */
  readonly idleTimeoutMs: number;
  /**
   * Where to connect for a destination (CONNECT, plain HTTP and the brokers' upstreams); default:
   * the destination itself. What it answers is resolved by DNS here and checked by `blockAddress`.
   */
  readonly resolveUpstream?: ResolveUpstream;
  /**
   * Addresses never connected to, whatever name or allow entry led there (allow lists cannot
   * override it; IP literals are checked too): consulted on every address the destination resolves
   * to, after `resolveUpstream`; one refused address refuses the request (403 `blocked_address`).
   * Default `defaultBlockAddress` (address.ts): link-local and metadata, loopback, unspecified,
   * multicast. Called with the request's session id too, for per-session exceptions. Tests that map
   * names to loopback pass `() => false` or their own predicate.
   */
  readonly blockAddress?: BlockAddress;
  /** The credential broker's providers, by the name in `/broker/<name>/…`; default none (every broker request 404). */
  readonly brokers?: Readonly<Record<string, BrokerProvider>>;
  /** CA certificates to trust for the brokers' upstream TLS instead of the default roots (tests). */
  readonly upstreamCa?: string | Buffer;
  /** The clock for records (epoch ms); default Date.now. */
  readonly now?: () => number;
}

export interface EgressProxy {
  /** The HTTP server, not yet listening: the caller calls `listen`. */
  readonly server: Server;
  /** Closes the session's open tunnels and requests; returns how many were open. */
  revoke(sessionId: string): number;
  stats(): ProxyStats;
  /** Stops accepting, closes every open connection (reason `proxy_closed`) and resolves when the server closed. */
  close(): Promise<void>;
}

export function createEgressProxy(options: EgressProxyOptions): EgressProxy {
  if (!(options.connectTimeoutMs > 0) || !(options.idleTimeoutMs > 0)) throw new TypeError('connectTimeoutMs and idleTimeoutMs must be positive');
  const registry = new ConnectionRegistry();
  const ctx: ProxyContext = {
    sessions: options.sessions,
    record: options.record,
    registry,
    connectTimeoutMs: options.connectTimeoutMs,
    idleTimeoutMs: options.idleTimeoutMs,
    resolveUpstream: options.resolveUpstream ?? ((host, port) => ({ host, port })),
    blockAddress: options.blockAddress ?? defaultBlockAddress,
    brokers: options.brokers ?? {},
    upstreamCa: options.upstreamCa,
    now: options.now ?? Date.now,
  };
  checkBrokers(ctx.brokers);
  // requestTimeout 0: a long upload is fine while bytes move; the idle timeout ends a stalled one.
  const server = createServer({ requestTimeout: 0, headersTimeout: Math.min(60_000, options.idleTimeoutMs) });
  server.setTimeout(options.idleTimeoutMs);
  server.on('request', (req, res) => (isBrokerRequest(req.url) ? handleBroker(ctx, req, res) : handleRequest(ctx, req, res)));
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => handleConnect(ctx, req, socket as Socket, head));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => refuseUpgrade(ctx, req, socket));
  server.on('clientError', (_err, socket: Duplex) => {
    if (socket.writable) socket.end(rawReply({ status: 400, reason: 'bad_request', message: 'malformed request' }));
    else socket.destroy();
  });
  return {
    server,
    revoke: (sessionId) => registry.revoke(sessionId),
    stats: () => registry.stats(),
    close: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        registry.closeAll('proxy_closed');
        server.closeAllConnections();
      }),
  };
}

/** Upgrade (WebSocket) over plain HTTP is not proxied: clients tunnel wss:// and ws:// with CONNECT. */
function refuseUpgrade(ctx: ProxyContext, req: IncomingMessage, socket: Duplex): void {
  const now = ctx.now();
  socket.on('error', () => undefined);
  socket.end(rawReply({ status: 501, reason: 'upgrade_unsupported', message: 'Upgrade is not proxied: use CONNECT' }));
  ctx.record({ sessionId: null, host: '', port: 0, method: req.method ?? '', allowed: false, reason: 'upgrade_unsupported', status: 501, bytesUp: 0, bytesDown: 0, startedAt: now, endedAt: now });
}
