/**
 * What the CONNECT and plain-HTTP paths share before any byte goes upstream: the proxy's context,
 * admission (credential, target, allow list, registration for revocation) and opening the upstream
 * connection under the connect timeout.
 * @module
 */
import { connect, type Socket } from 'node:net';
import { authenticate, authorize, isDenial, type Denial } from './gate.js';
import type { ConnectionRegistry, OpenConnection } from './registry.js';
import { BadTargetError, type Target } from './target.js';
import type { EgressRecorder, EgressSessions, ResolveUpstream } from './types.js';

export interface ProxyContext {
  readonly sessions: EgressSessions;
  readonly record: EgressRecorder;
  readonly registry: ConnectionRegistry;
  readonly connectTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly resolveUpstream: ResolveUpstream;
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
export class UpstreamConnectError extends Error {
  override readonly name = 'UpstreamConnectError';
  constructor(readonly timeout: boolean) {
    super(timeout ? 'upstream connect timed out' : 'upstream unreachable');
  }
}

/** A TCP connection to the target's upstream (via `resolveUpstream`), within `connectTimeoutMs`. */
export function connectUpstream(ctx: ProxyContext, target: Target): Promise<Socket> {
  const to = ctx.resolveUpstream(target.host, target.port);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: to.host, port: to.port, noDelay: true });
    const fail = (timeout: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      reject(new UpstreamConnectError(timeout));
    };
    const timer = setTimeout(() => fail(true), ctx.connectTimeoutMs);
    timer.unref();
    const onError = (): void => fail(false);
    socket.once('error', onError);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      socket.on('error', ignore); // the caller's pipeline sees errors from here on
      resolve(socket);
    });
  });
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
  403: 'Forbidden',
  407: 'Proxy Authentication Required',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  504: 'Gateway Timeout',
};
