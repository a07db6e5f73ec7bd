/**
 * A CONNECT tunnel: admission, the upstream connection, `200 Connection Established`, the SNI check
 * of the client's first bytes (see `judgeFirstBytes`), then bytes both ways with backpressure.
 *
 * The upstream is connected before the 200 (so an unreachable host is a 502, not a dead tunnel) and
 * its bytes flow to the client from then on (server-first protocols on non-443 ports work); the
 * client's bytes go upstream only after the first of them passed the check. The proxy buffers at most
 * the ClientHello (`MAX_CLIENT_HELLO_BYTES` plus one socket read) beyond the streams' high-water marks.
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { pipeline } from 'node:stream';
import { admit, connectDenial, connectUpstream, rawReply, type ProxyContext } from './admit.js';
import { PROXY_AUTHENTICATE } from './auth.js';
import { judgeFirstBytes, type Denial } from './gate.js';
import type { OpenConnection } from './registry.js';
import { peekClientHello, type ClientHelloPeek } from './sni.js';
import { parseConnectTarget, type Target } from './target.js';
import type { EgressReason } from './types.js';

/** Handles the `connect` event of the proxy's http.Server. */
export function handleConnect(ctx: ProxyContext, req: IncomingMessage, client: Socket, head: Buffer): void {
  void new Tunnel(ctx, client).run(req, head);
}

const ignore = (): void => undefined;

class Tunnel implements OpenConnection {
  private readonly startedAt: number;
  private upstream: Socket | null = null;
  private sessionId: string | null = null;
  private target: Target | null = null;
  private registered = false;
  private settled = false; // admission answered: a close may record now
  private closing = false;
  private recorded = false;
  private allowed = false;
  private status: number | undefined;
  private reason: EgressReason | undefined;
  private directionsDone = 0;

  constructor(
    private readonly ctx: ProxyContext,
    private readonly client: Socket,
  ) {
    this.startedAt = ctx.now();
    client.on('error', ignore);
    client.setTimeout(ctx.idleTimeoutMs, () => this.close('idle_timeout'));
    client.once('close', () => this.close(client.readableEnded && client.writableFinished ? undefined : 'client_error'));
  }

  async run(req: IncomingMessage, head: Buffer): Promise<void> {
    const a = await admit(this.ctx, req.headers['proxy-authorization'], () => parseConnectTarget(req.url ?? ''), this);
    this.sessionId = a.sessionId;
    this.target = a.target;
    this.registered = a.ok;
    this.allowed = a.ok;
    this.settled = true;
    if (!a.ok) return this.refuse(a.denial);
    if (this.closing) return this.finish();
    let upstream: Socket;
    try {
      upstream = await connectUpstream(this.ctx, a.sessionId, a.target.host, a.target.port);
    } catch (err) {
      const denial = connectDenial(err);
      if (denial.reason === 'blocked_address') this.allowed = false;
      return this.refuse(denial);
    }
    if (this.closing) return void upstream.destroy();
    this.upstream = upstream;
    upstream.setTimeout(this.ctx.idleTimeoutMs, () => this.close('idle_timeout'));
    this.client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    this.status = 200;
    pipeline(upstream, this.client, (err) => this.directionEnded(err));
    await this.checkThenForward(a.target, head);
  }

  private async checkThenForward(target: Target, head: Buffer): Promise<void> {
    const first = await readFirstBytes(this.client, head);
    if (this.closing || this.upstream === null) return;
    if (first === null) return this.close(); // the client ended without a byte
    const verdict = judgeFirstBytes(first.peek, target);
    if (verdict !== null) {
      this.allowed = false;
      this.status = undefined;
      return this.close(verdict);
    }
    this.client.unshift(first.bytes);
    pipeline(this.client, this.upstream, (err) => this.directionEnded(err));
  }

  /** A normal end of one direction, or an error; a late error after a normal end is a normal close. */
  private directionEnded(err: Error | null | undefined): void {
    if (err && this.directionsDone === 0) return this.close(this.upstream?.errored ? 'upstream_error' : 'client_error');
    this.directionsDone += 1;
    if (err || this.directionsDone === 2) this.close();
  }

  private refuse(denial: Denial): void {
    this.status = denial.status;
    this.reason = denial.reason;
    this.closing = true;
    const extra: Record<string, string> = denial.status === 407 ? { 'Proxy-Authenticate': PROXY_AUTHENTICATE } : {};
    if (!this.client.destroyed) this.client.end(rawReply(denial, extra));
    this.finish();
  }

  close(reason?: EgressReason): void {
    if (this.closing) return;
    this.closing = true;
    this.reason ??= reason;
    this.client.destroy();
    this.upstream?.destroy();
    if (this.settled) this.finish();
  }

  private finish(): void {
    if (this.recorded) return;
    this.recorded = true;
    if (this.registered && this.sessionId !== null) this.ctx.registry.delete(this.sessionId, this);
    this.ctx.record({
      sessionId: this.sessionId,
      host: this.target?.host ?? '',
      port: this.target?.port ?? 0,
      method: 'CONNECT',
      allowed: this.allowed,
      ...(this.reason === undefined ? {} : { reason: this.reason }),
      ...(this.status === undefined ? {} : { status: this.status }),
      bytesUp: this.upstream?.bytesWritten ?? 0,
      bytesDown: this.upstream?.bytesRead ?? 0,
      startedAt: this.startedAt,
      endedAt: this.ctx.now(),
    });
  }

  buffered(): number {
    const { client, upstream } = this;
    return client.readableLength + client.writableLength + (upstream === null ? 0 : upstream.readableLength + upstream.writableLength);
  }
}

/** The client's first bytes up to a complete ClientHello verdict (null when it ended or closed first); leaves the socket paused. */
function readFirstBytes(client: Socket, head: Buffer): Promise<{ peek: ClientHelloPeek; bytes: Buffer } | null> {
  return new Promise((resolve) => {
    let bytes = head;
    const done = (result: { peek: ClientHelloPeek; bytes: Buffer } | null): void => {
      client.off('data', onData);
      client.off('end', onEnd);
      client.off('close', onEnd);
      client.pause();
      resolve(result);
    };
    const check = (): boolean => {
      const peek = peekClientHello(bytes);
      if (peek.kind === 'incomplete') return false;
      done({ peek, bytes });
      return true;
    };
    const onData = (chunk: Buffer): void => {
      bytes = bytes.length === 0 ? chunk : Buffer.concat([bytes, chunk]);
      check();
    };
    const onEnd = (): void => done(null);
    if (bytes.length > 0 && check()) return;
    if (client.destroyed) return done(null);
    client.on('data', onData);
    client.on('end', onEnd);
    client.on('close', onEnd);
  });
}
