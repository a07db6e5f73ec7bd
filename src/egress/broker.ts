/**
 * The credential broker: a model API reached through the proxy without the agent ever holding its
 * key. The agent's SDK is pointed at `http://<proxy>/broker/<provider>` (Anthropic) or
 * `…/broker/<provider>/v1` (OpenAI) with its session's proxy token as the API key, and sends
 * ordinary origin-form requests (`POST /broker/anthropic/v1/messages`, `x-api-key: <token>` or
 * `Authorization: Bearer <token>`). The proxy
 * - authenticates the token (`sessions.lookup({ username: null, token })`), then checks that the
 *   provider is configured (else 404) and that the session may use it (`session.brokers`, else 403);
 * - connects to the provider's `upstream` over TLS (through `resolveUpstream` and `blockAddress`
 *   like every destination) and forwards the request to the upstream's base path + the rest of the
 *   path and query, without the client's credential headers (`x-api-key`, `authorization`,
 *   `proxy-authorization`, `cookie`) or hop-by-hop headers, with the real key (read from
 *   `key()` at request time) in the provider's header and `Accept-Encoding: identity` (so the
 *   usage can be read);
 * - streams both bodies with backpressure (server-sent events flow through as they arrive) and
 *   reads the token usage on the way (`usage.ts`);
 * - records one EgressRecord per request, `host` the upstream's, with `broker` set.
 * Refusals are JSON in the provider's error shape: 401 without or with an unknown token, 404 for an
 * unknown provider, 403 for one the session may not use, 503 while the key is not set, 502/504 when
 * the upstream cannot be reached. The key never appears in replies, records or errors.
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { connectDenial, connectUpstream, type ProxyContext } from './admit.js';
import type { Denial } from './gate.js';
import { endToEndHeaders } from './headers.js';
import { HttpExchange } from './exchange.js';
import type { BrokerProvider, EgressRecord, EgressSession } from './types.js';
import { usageReader, type UsageReader } from './usage.js';

/** The public APIs: spread one and add `key` (`{ ...BROKER_PRESETS.anthropic, key: () => … }`). */
export const BROKER_PRESETS = {
  anthropic: { upstream: 'https://api.anthropic.com', auth: 'x-api-key' },
  openai: { upstream: 'https://api.openai.com', auth: 'bearer' },
} as const satisfies Record<string, Omit<BrokerProvider, 'key'>>;

const PROVIDER_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
const CLIENT_CREDENTIALS = ['host', 'x-api-key', 'authorization', 'cookie', 'accept-encoding'];

/** Throws a TypeError for a provider the proxy cannot use (a bad name or upstream URL). */
export function checkBrokers(brokers: Readonly<Record<string, BrokerProvider>>): void {
  for (const [name, p] of Object.entries(brokers)) {
    if (!PROVIDER_NAME.test(name)) throw new TypeError(`broker provider name ${JSON.stringify(name)} must be lower-case letters, digits and dashes`);
    let url: URL | null = null;
    try {
      url = new URL(p.upstream);
    } catch {
      // reported below
    }
    if (url === null || url.protocol !== 'https:' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
      throw new TypeError(`broker provider ${name}: upstream must be an https:// base URL without credentials, query or fragment`);
    }
  }
}

/** Whether an origin-form request is for the broker. */
export const isBrokerRequest = (url: string | undefined): boolean => url === '/broker' || (url?.startsWith('/broker/') ?? false);

/** Handles a `/broker/…` request of the proxy's http.Server. */
export function handleBroker(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): void {
  void new BrokerExchange(ctx, req, res).run();
}

interface BrokerPath {
  readonly provider: string;
  /** The rest of the path and the query, e.g. `/v1/messages?beta=true`. */
  readonly rest: string;
}

/** `/broker/<provider>[/rest][?query]`; null for a path with dot segments or no provider. */
function parseBrokerPath(url: string): BrokerPath | null {
  const m = /^\/broker\/([^/?#]+)([^?#]*)(\?[^#]*)?$/.exec(url);
  if (m === null) return null;
  const path = m[2] === '' ? '/' : m[2]!;
  if (/(^|\/)(\.|%2e){1,2}(\/|$)/i.test(path)) return null;
  return { provider: m[1]!.toLowerCase().slice(0, 64), rest: `${path}${m[3] ?? ''}` };
}

/** The token the client sent as its API key: `x-api-key`, else `Authorization: Bearer`. */
function clientToken(req: IncomingMessage): string | null {
  const apiKey = req.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return apiKey.length > 4096 ? null : apiKey.trim();
  const m = /^\s*bearer\s+(\S{1,4096})\s*$/i.exec(req.headers.authorization ?? '');
  return m === null ? null : m[1]!;
}

class BrokerExchange extends HttpExchange {
  private readonly path: BrokerPath | null;
  private readonly provider: BrokerProvider | undefined;
  private readonly upstream: URL | null;
  private usage: UsageReader | null = null;

  constructor(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse) {
    super(ctx, req, res);
    this.path = parseBrokerPath(req.url ?? '');
    const name = this.path?.provider;
    this.provider = name !== undefined && Object.hasOwn(ctx.brokers, name) ? ctx.brokers[name] : undefined;
    this.upstream = this.provider === undefined ? null : new URL(this.provider.upstream);
  }

  async run(): Promise<void> {
    const admitted = await this.admit();
    if (admitted === null) return;
    if (this.done || this.req.destroyed) return this.close('client_error');
    const upstream = this.upstream!;
    let socket: Socket;
    try {
      const ca = this.ctx.upstreamCa;
      socket = await connectUpstream(this.ctx, admitted.sessionId, upstream.hostname.replace(/^\[|\]$/g, ''), this.port(), { ALPNProtocols: ['http/1.1'], ...(ca === undefined ? {} : { ca }) });
    } catch (err) {
      if (this.done) return;
      const denial = connectDenial(err);
      if (denial.reason === 'blocked_address') this.allowed = false;
      return this.deny(denial);
    }
    if (this.done) return void socket.destroy();
    this.send(socket, upstream, admitted.key);
  }

  /** Authenticates and authorizes; the session and the key to send upstream, or null after a denial. */
  private async admit(): Promise<{ sessionId: string; key: string } | null> {
    const token = clientToken(this.req);
    if (token === null) return this.denied({ status: 401, reason: 'no_credential', message: 'an API key is required: the session token' });
    const ticket = this.ctx.registry.begin();
    try {
      let session: EgressSession | null = null;
      try {
        session = await this.ctx.sessions.lookup({ username: null, token });
      } catch {
        session = null;
      }
      if (session === null) return this.denied({ status: 401, reason: 'bad_credential', message: 'the API key (session token) is not accepted' });
      this.sessionId = session.sessionId;
      const { path, provider } = this;
      if (path === null || provider === undefined) return this.denied({ status: 404, reason: 'unknown_provider', message: 'no such broker provider' });
      if (!session.brokers.has(path.provider)) return this.denied({ status: 403, reason: 'provider_not_allowed', message: `this session may not use the ${path.provider} broker` });
      let key: string | undefined;
      try {
        key = provider.key();
      } catch {
        key = undefined;
      }
      if (key === undefined || key === '') return this.denied({ status: 503, reason: 'provider_unconfigured', message: `the ${path.provider} broker has no API key configured` });
      if (this.done) return null; // the client went away meanwhile
      if (!this.ctx.registry.add(session.sessionId, this, ticket)) return this.denied({ status: 401, reason: 'bad_credential', message: 'the API key (session token) is not accepted' });
      this.registered = true;
      this.allowed = true;
      return { sessionId: session.sessionId, key };
    } finally {
      this.ctx.registry.end();
    }
  }

  private port(): number {
    return this.upstream!.port === '' ? 443 : Number(this.upstream!.port);
  }

  private send(socket: Socket, upstream: URL, key: string): void {
    const credential = this.provider!.auth === 'x-api-key' ? ['x-api-key', key] : ['Authorization', `Bearer ${key}`];
    const headers = ['Host', upstream.host, ...endToEndHeaders(this.req.rawHeaders, CLIENT_CREDENTIALS).flat(), 'Accept-Encoding', 'identity', ...credential];
    this.transmit(socket, `${upstream.pathname.replace(/\/$/, '')}${this.path!.rest}`, headers);
  }

  /** The usage is read off the reply as it streams by (usage.ts); cookies never reach the agent. */
  protected replyHeaders(upRes: IncomingMessage): string[] {
    const usage = usageReader(upRes.headers['content-type'], upRes.headers['content-encoding']);
    this.usage = usage;
    upRes.on('data', (chunk: Buffer) => usage.push(chunk));
    return endToEndHeaders(upRes.rawHeaders, ['set-cookie']).flat();
  }

  protected destination(): Pick<EgressRecord, 'host' | 'port' | 'broker'> {
    const usage = this.usage?.result() ?? { inputTokens: null, outputTokens: null };
    return {
      host: this.upstream?.hostname.replace(/^\[|\]$/g, '') ?? '',
      port: this.upstream === null ? 0 : this.port(),
      broker: { provider: this.path?.provider ?? '', ...usage },
    };
  }

  private denied(denial: Denial): null {
    this.deny(denial);
    return null;
  }

  protected deny(denial: Denial): void {
    this.reason = denial.reason;
    if (!this.res.destroyed && !this.res.headersSent) {
      const body = JSON.stringify(errorBody(this.provider?.auth === 'x-api-key' ? 'anthropic' : 'openai', denial));
      this.res.writeHead(denial.status, { 'Content-Type': 'application/json' }).end(body);
    }
    this.finish();
  }
}

const ERROR_TYPES: Record<number, { anthropic: string; openai: string }> = {
  401: { anthropic: 'authentication_error', openai: 'invalid_request_error' },
  403: { anthropic: 'permission_error', openai: 'invalid_request_error' },
  404: { anthropic: 'not_found_error', openai: 'invalid_request_error' },
};

/** A refusal in the provider's error shape (the OpenAI one when the provider is unknown). */
function errorBody(shape: 'anthropic' | 'openai', denial: Denial): unknown {
  const type = ERROR_TYPES[denial.status]?.[shape] ?? (shape === 'anthropic' ? 'api_error' : 'server_error');
  const message = `berth broker: ${denial.message}`;
  if (shape === 'anthropic') return { type: 'error', error: { type, message } };
  return { error: { message, type, code: denial.reason } };
}
