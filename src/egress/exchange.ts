/**
 * What a plain-HTTP forward (forward.ts) and a broker request (broker.ts) share: one request relayed
 * on a fresh upstream connection with backpressure both ways (never buffered whole), registered for
 * revocation, ended once (a reply when none has started, else the client connection cut) and
 * recorded once when it ends. A subclass admits the request, picks the destination and the headers,
 * and answers refusals in its own shape.
 * @module
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { pipeline } from 'node:stream';
import type { ProxyContext } from './admit.js';
import type { Denial } from './gate.js';
import type { OpenConnection } from './registry.js';
import type { EgressReason, EgressRecord } from './types.js';

export abstract class HttpExchange implements OpenConnection {
  protected readonly startedAt: number;
  protected upstreamReq: ClientRequest | null = null;
  protected upstreamRes: IncomingMessage | null = null;
  protected upstreamSocket: Socket | null = null;
  protected sessionId: string | null = null;
  protected registered = false;
  protected allowed = false;
  protected done = false;
  protected reason: EgressReason | undefined;

  constructor(
    protected readonly ctx: ProxyContext,
    protected readonly req: IncomingMessage,
    protected readonly res: ServerResponse,
  ) {
    this.startedAt = ctx.now();
    res.once('close', () => {
      if (!res.writableFinished) this.close('client_error');
    });
  }

  /** The record's destination (and the broker's part) as known when the exchange ends. */
  protected abstract destination(): Pick<EgressRecord, 'host' | 'port' | 'broker'>;

  /** Answers a refusal (in the subclass's shape), records `denial.reason` and ends the exchange. */
  protected abstract deny(denial: Denial): void;

  /** The reply headers to send for the upstream's response (the subclass may watch its body too). */
  protected abstract replyHeaders(upRes: IncomingMessage): string[];

  /** Sends the client's request on `socket` (`path`, `headers` as a flat raw list) and relays the reply. */
  protected transmit(socket: Socket, path: string, headers: string[]): void {
    this.upstreamSocket = socket;
    socket.setTimeout(this.ctx.idleTimeoutMs, () => this.fail('idle_timeout', 504, 'upstream idle'));
    const up = httpRequest({ createConnection: () => socket, method: this.req.method, path, headers, setHost: false });
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
    this.res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, this.replyHeaders(upRes));
    pipeline(upRes, this.res, (err) => {
      if (err) this.fail(upRes.errored ? 'upstream_error' : 'client_error', 502, 'upstream failed');
      else this.finish();
    });
  }

  /** Ends the exchange with a failure: a reply when none has started, else the client connection is cut. */
  protected fail(reason: EgressReason, status: 502 | 504, message: string): void {
    if (this.done) return;
    if (!this.res.headersSent) {
      this.upstreamReq?.destroy();
      return this.deny({ status, reason, message });
    }
    this.close(reason);
  }

  close(reason?: EgressReason): void {
    if (this.done) return;
    this.reason ??= reason;
    this.upstreamReq?.destroy();
    this.upstreamSocket?.destroy();
    this.req.socket.destroy();
    this.finish();
  }

  protected finish(): void {
    if (this.done) return;
    this.done = true;
    if (this.registered && this.sessionId !== null) this.ctx.registry.delete(this.sessionId, this);
    const status = this.res.headersSent ? this.res.statusCode : undefined;
    this.ctx.record({
      sessionId: this.sessionId,
      ...this.destination(),
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
