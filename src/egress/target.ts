/**
 * Where a proxied request goes: the host and port of a CONNECT authority (`host:port`) or of an
 * absolute-form request URI (`http://host[:port]/path`). Pure.
 *
 * Hosts go through the WHATWG URL parser, so every spelling of an address becomes one form
 * (`2130706433`, `0x7f.1` and `127.1` are all `127.0.0.1`; a Unicode name becomes punycode): a
 * destination cannot pass as a name when it is an address. The result is lower case, without a
 * trailing dot or IPv6 brackets.
 * @module
 */
import { normalizeHost } from './policy.js';

export interface Target {
  readonly host: string;
  readonly port: number;
}

export interface HttpTarget extends Target {
  /** The origin-form path sent upstream (`/path?query`). */
  readonly path: string;
  /** The Host header value sent upstream (`host` or `host:port`). */
  readonly hostHeader: string;
}

/** A request the proxy cannot route; `message` is safe to show the client. */
export class BadTargetError extends Error {
  override readonly name = 'BadTargetError';
}

/** The target of `CONNECT authority`: `host:port` or `[v6]:port`, the port required. */
export function parseConnectTarget(authority: string): Target {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/\\@?#%\s]+):(\d{1,5})$/.exec(authority);
  if (m === null) throw new BadTargetError('CONNECT needs host:port');
  const port = toPort(m[2]!);
  return { host: canonicalHost(m[1]!), port };
}

/** The target of a plain-HTTP proxy request; its URI must be absolute `http://…`. */
export function parseHttpTarget(uri: string): HttpTarget {
  if (!/^http:\/\//i.test(uri)) {
    throw new BadTargetError(/^https:\/\//i.test(uri) ? 'use CONNECT for https:// URLs' : 'a proxy request needs an absolute http:// URI');
  }
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new BadTargetError('the request URI is no valid URL');
  }
  if (url.username !== '' || url.password !== '') throw new BadTargetError('credentials in the request URI are not forwarded');
  const host = normalizeHost(url.hostname);
  const port = url.port === '' ? 80 : toPort(url.port);
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return { host, port, path: `${url.pathname}${url.search}`, hostHeader: port === 80 ? shownHost : `${shownHost}:${String(port)}` };
}

function canonicalHost(raw: string): string {
  try {
    const host = normalizeHost(new URL(`http://${raw}/`).hostname);
    if (host === '') throw new BadTargetError('CONNECT needs a host');
    return host;
  } catch (err) {
    if (err instanceof BadTargetError) throw err;
    throw new BadTargetError('CONNECT names no valid host');
  }
}

function toPort(digits: string): number {
  const port = Number(digits);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new BadTargetError('the port must be 1-65535');
  return port;
}
