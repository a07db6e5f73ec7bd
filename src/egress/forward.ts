/**
 * A plain-HTTP proxy request (`GET http://host/path`): admission, then the request forwarded on a
 * fresh upstream connection with hop-by-hop headers and the proxy credential removed, bodies streamed
 * both ways with backpressure (never buffered whole). The URI decides the destination: the client's
 * Host header is ignored and replaced by the URI's host (RFC 9112 3.2.2), so it cannot name another.
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { admit, connectDenial, connectUpstream, type ProxyContext } from './admit.js';
import { PROXY_AUTHENTICATE } from './auth.js';
import type { Denial } from './gate.js';
import { endToEndHeaders } from './headers.js';
import { HttpExchange } from './exchange.js';
import { parseHttpTarget, type HttpTarget, type Target } from './target.js';
import type { EgressRecord } from './types.js';

/** Handles the `request` event of the proxy's http.Server. */
export function handleRequest(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): void {
  void new Forward(ctx, req, res).run();
}

class Forward extends HttpExchange {
  private target: Target | null = null;

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
    this.transmit(socket, target.path, ['Host', target.hostHeader, ...endToEndHeaders(this.req.rawHeaders, ['host']).flat()]);
  }

  protected replyHeaders(upRes: IncomingMessage): string[] {
    return endToEndHeaders(upRes.rawHeaders).flat();
  }

  protected destination(): Pick<EgressRecord, 'host' | 'port'> {
    return { host: this.target?.host ?? '', port: this.target?.port ?? 0 };
  }

  protected deny(denial: Denial): void {
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
}
