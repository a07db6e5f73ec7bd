/**
 * Helpers for the egress proxy's tests and benchmark: a self-signed certificate (the openssl CLI), a
 * proxy on loopback with in-memory sessions and records, local upstream servers, and clients that
 * go through the proxy (CONNECT and absolute-form HTTP).
 */
import { execFileSync } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request, type IncomingMessage, type RequestOptions } from 'node:http';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultBlockAddress } from '../../../src/egress/address.js';
import { allowMatcher, createEgressProxy, parseAllowList, type EgressProxy, type EgressRecord, type EgressSession, type ProxyCredential } from '../../../src/egress/index.js';

export interface TestCert {
  readonly key: string;
  readonly cert: string;
}

/** A self-signed P-256 certificate for `names`, made with the openssl CLI (which the tests need). */
export function selfSignedCert(names: readonly string[]): TestCert {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
  } catch {
    throw new Error('the egress proxy tests need the openssl CLI to make a test certificate: install openssl (apt-get install openssl)');
  }
  const dir = mkdtempSync(join(tmpdir(), 'berth-egress-cert-'));
  try {
    const san = names.map((n) => `DNS:${n}`).join(',');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', `/CN=${names[0] ?? 'test'}`, '-addext', `subjectAltName=${san}`, '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** In-memory sessions: token -> session; `revoke` drops the token and closes the session's connections. */
export class TestSessions {
  private readonly byToken = new Map<string, EgressSession>();
  proxy: EgressProxy | null = null;

  add(sessionId: string, token: string, allow: string[], brokers: string[] = []): string {
    this.byToken.set(token, { sessionId, allow: allowMatcher(parseAllowList(allow, 'network.allow')), brokers: new Set(brokers) });
    return basic(sessionId, token);
  }

  lookup(credential: ProxyCredential): EgressSession | null {
    const session = this.byToken.get(credential.token) ?? null;
    return session !== null && (credential.username === null || credential.username === session.sessionId) ? session : null;
  }

  revoke(sessionId: string): number {
    for (const [token, s] of this.byToken) if (s.sessionId === sessionId) this.byToken.delete(token);
    return this.proxy?.revoke(sessionId) ?? 0;
  }
}

export const basic = (user: string, token: string): string => `Basic ${Buffer.from(`${user}:${token}`).toString('base64')}`;

/** The records the proxy made, with a way to await the next one matching a predicate. */
export class Records extends EventEmitter {
  readonly all: EgressRecord[] = [];
  readonly add = (record: EgressRecord): void => {
    this.all.push(record);
    this.emit('record', record);
  };

  async next(match: (r: EgressRecord) => boolean): Promise<EgressRecord> {
    const found = this.all.find(match);
    if (found) return found;
    for (;;) {
      const [record] = (await once(this, 'record')) as [EgressRecord];
      if (match(record)) return record;
    }
  }
}

export interface TestProxy {
  readonly proxy: EgressProxy;
  readonly port: number;
  readonly sessions: TestSessions;
  readonly records: Records;
}

/** What a test may set beyond the routes and timeouts. */
export type ProxyExtras = Pick<Parameters<typeof createEgressProxy>[0], 'blockAddress' | 'brokers' | 'upstreamCa' | 'resolveUpstream'>;

/** The default address check but for 127.0.0.1, where the tests' upstreams listen. */
export const blockButLoopback = (ip: string): boolean => ip !== '127.0.0.1' && defaultBlockAddress(ip);

/**
 * A proxy on 127.0.0.1 whose upstreams come from `routes` ("host:port" -> local port; others go to
 * 127.0.0.1:9, where nothing listens); `blockAddress` defaults to `blockButLoopback`.
 */
export async function startProxy(routes: Map<string, number>, timeouts = { connectTimeoutMs: 5_000, idleTimeoutMs: 30_000 }, extras: ProxyExtras = {}): Promise<TestProxy> {
  const sessions = new TestSessions();
  const records = new Records();
  const proxy = createEgressProxy({
    sessions,
    record: records.add,
    ...timeouts,
    resolveUpstream: (host, port) => {
      const local = routes.get(`${host}:${String(port)}`);
      return local === undefined ? { host: '127.0.0.1', port: 9 } : { host: '127.0.0.1', port: local };
    },
    blockAddress: blockButLoopback,
    ...extras,
  });
  sessions.proxy = proxy;
  proxy.server.listen(0, '127.0.0.1');
  await once(proxy.server, 'listening');
  return { proxy, port: (proxy.server.address() as AddressInfo).port, sessions, records };
}

export async function listen<S extends NetServer>(server: S): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

export interface Tunnel {
  readonly status: number;
  readonly socket: Socket;
  /** The reply's body for a refused CONNECT. */
  readonly body: string;
  readonly headers: IncomingMessage['headers'];
}

/** Sends `CONNECT authority` through the proxy; resolves with the status and the raw socket. */
export async function connectThrough(proxyPort: number, authority: string, auth?: string): Promise<Tunnel> {
  const req = request({ host: '127.0.0.1', port: proxyPort, method: 'CONNECT', path: authority, headers: auth === undefined ? {} : { 'proxy-authorization': auth } });
  req.end();
  const [res, socket, head] = (await once(req, 'connect')) as [IncomingMessage, Socket, Buffer];
  let body = head.toString('utf8');
  if (res.statusCode !== 200) {
    socket.on('data', (c: Buffer) => (body += c.toString('utf8')));
    if (!socket.readableEnded) await once(socket, 'close');
  }
  return { status: res.statusCode ?? 0, socket, body, headers: res.headers };
}

export interface Reply {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A plain-HTTP request through the proxy (absolute-form URI); the whole reply body as text. */
export async function httpThrough(proxyPort: number, url: string, options: RequestOptions & { body?: string } = {}): Promise<Reply> {
  const { body, headers, ...rest } = options;
  // Like curl: the Host header names the URI's host (node's default would name the proxy).
  const req = request({ host: '127.0.0.1', port: proxyPort, path: url, agent: false, ...rest, headers: { host: new URL(url).host, ...headers } });
  req.end(body);
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  let text = '';
  for await (const chunk of res) text += (chunk as Buffer).toString('utf8');
  return { status: res.statusCode ?? 0, headers: res.headers, body: text };
}
