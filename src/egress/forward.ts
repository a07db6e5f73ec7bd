/**
 * A plain-HTTP proxy request (`GET http://host/path`): admission, then the request forwarded on a
 * fresh upstream connection with hop-by-hop headers and the proxy credential removed, bodies streamed
 * both ways with backpressure (never buffered whole). The URI decides the destination: the client's
 * Host header is ignored and replaced by the URI's host (RFC 9112 3.2.2), so it cannot name another.
 * @module
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { pipeline } from 'node:stream';
import { admit, connectDenial, connectUpstream, type ProxyContext } from './admit.js';
import { PROXY_AUTHENTICATE } from './auth.js';
import type { Denial } from './gate.js';
import { endToEndHeaders } from './headers.js';
import type { OpenConnection } from './registry.js';
import { parseHttpTarget, type HttpTarget, type Target } from './target.js';
import type { EgressReason } from './types.js';

/** Handles the `request` event of the proxy's http.Server. */
export function handleRequest(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): void {
  void new Forward(ctx, req, res).run();
}

class Forward implements OpenConnection {
  private readonly startedAt: number;
  private upstreamReq: ClientRequest | null = null;
  private upstreamRes: IncomingMessage | null = null;
  private upstreamSocket: Socket | null = null;
  private sessionId: string | null = null;
  private target: Target | null = null;
  private registered = false;
  private allowed = false;
  private done = false;
  private reason: EgressReason | undefined;

  constructor(
    private readonly ctx: ProxyContext,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    this.startedAt = ctx.now();
    res.once('close', () => {
      if (!res.writableFinished) this.close('client_error');
    });
  }

  async run(): Promise<void> {
    const parsed: { target?: HttpTarget } = {};
    const a = await admit(this.ctx, this.req.headers['proxy-authorization'], () => (parsed.target = parseHttpTarget(this.req.url ?? '')), this);
    this.sessionId = a.sessionId;
    this.target = a.target;
    this.registered = a.ok;
    this.allowed = a.ok;
    if (!a.ok) return this.deny(a.denial);
    if (this.done) return this.ctx.registry.delete(a.sessionId, this); // the client left during admission (recorded then)
    if (this.req.destroyed) return this.close('client_error');
    if (parsed.target !== undefined) await this.send(a.sessionId, parsed.target);
  }

  private async send(sessionId: string, target: HttpTarget): Promise<void> {
    let socket: Socket;
    try {
      socket = await connectUpstream(this.ctx, sessionId, target.host, target.port);
    } catch (err) {
      if (this.done) return;
      const denial = connectDenial(err);
      if (denial.reason === 'blocked_address') this.allowed = false;
      return this.deny(denial);
    }
    if (this.done) return void socket.destroy();
    this.upstreamSocket = socket;
    socket.setTimeout(this.ctx.idleTimeoutMs, () => this.fail('idle_timeout', 504, 'upstream idle'));
    const headers = endToEndHeaders(this.req.rawHeaders, ['host']).flat();
    const up = httpRequest({ createConnection: () => socket, method: this.req.method, path: target.path, headers: ['Host', target.hostHeader, ...headers], setHost: false });
    this.upstreamReq = up;
    up.on('error', () => this.fail('upstream_error', 502, 'upstream failed'));
    up.once('response', (upRes) => this.relay(upRes));
    pipeline(this.req, up, (err) => {
      if (err) this.fail(this.req.errored ? 'client_error' : 'upstream_error', 502, 'upstream failed');
    });
  }

  private relay(upRes: IncomingMessage): void {
    this.upstreamRes = upRes;
    if (this.done) return void upRes.destroy();
    this.res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, endToEndHeaders(upRes.rawHeaders).flat());
    pipeline(upRes, this.res, (err) => {
      if (err) this.fail(upRes.errored ? 'upstream_error' : 'client_error', 502, 'upstream failed');
      else this.finish();
    });
  }

  /** Ends the exchange with a failure: a reply when none has started, else the client connection is cut. */
  private fail(reason: EgressReason, status: 502 | 504, message: string): void {
    if (this.done) return;
    if (!this.res.headersSent) {
      this.reason = reason;
      this.upstreamReq?.destroy();
      this.reply({ status, reason, message });
      return this.finish();
    }
    this.close(reason);
  }

  private deny(denial: Denial): void {
    this.reason = denial.reason;
    this.reply(denial);
    this.finish();
  }

  private reply(denial: Denial): void {
    const headers: Record<string, string> = { 'Content-Type': 'text/plain; charset=utf-8' };
    if (denial.status === 407) headers['Proxy-Authenticate'] = PROXY_AUTHENTICATE;
    if (this.res.destroyed) return;
    this.res.writeHead(denial.status, headers).end(`${denial.message}\n`);
  }

  close(reason?: EgressReason): void {
    if (this.done) return;
    this.reason ??= reason;
    this.upstreamReq?.destroy();
    this.req.socket.destroy();
    this.finish();
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    if (this.registered && this.sessionId !== null) this.ctx.registry.delete(this.sessionId, this);
    const status = this.res.headersSent ? this.res.statusCode : undefined;
    this.ctx.record({
      sessionId: this.sessionId,
      host: this.target?.host ?? '',
      port: this.target?.port ?? 0,
      method: this.req.method ?? '',
      allowed: this.allowed,
      ...(this.reason === undefined ? {} : { reason: this.reason }),
      ...(status === undefined ? {} : { status }),
      bytesUp: this.upstreamSocket?.bytesWritten ?? 0,
      bytesDown: this.upstreamSocket?.bytesRead ?? 0,
      startedAt: this.startedAt,
      endedAt: this.ctx.now(),
    });
  }

  buffered(): number {
    const { req, res, upstreamReq, upstreamRes, upstreamSocket } = this;
    const sockets = [req.socket, upstreamSocket].reduce((n, s) => n + (s === null ? 0 : s.readableLength + s.writableLength), 0);
    return sockets + req.readableLength + res.writableLength + (upstreamReq?.writableLength ?? 0) + (upstreamRes?.readableLength ?? 0);
  }
}
