/**
 * The Host and Origin checks of `berth serve` (pure): a request must name the server itself in
 * `Host` (no DNS rebinding onto 127.0.0.1), and a request made with the dashboard cookie must
 * come from the server's own origin.
 * @module
 */

/** The loopback names the server always answers to. */
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** `H` as it appears in a Host header (an IPv6 literal in brackets), lower-case. */
export function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
}

/**
 * Every `Host` header value the server accepts: the loopback names and `extraHost`, each with
 * `:port`, and each of `publicHosts` (the names a Service or Ingress gives it, `--public-host`)
 * bare and with any port, written `name:*` (the Service's or Ingress's port is not the server's).
 */
export function allowedHosts(port: number, extraHost?: string, publicHosts: readonly string[] = []): string[] {
  const names = new Set(LOOPBACK_NAMES);
  // A wildcard bind address is not a name a browser would use: it adds nothing.
  if (extraHost !== undefined && extraHost !== '' && extraHost !== '0.0.0.0' && extraHost !== '::') names.add(hostName(extraHost));
  const out: string[] = [];
  for (const name of names) {
    out.push(`${name}:${port}`);
    if (port === 80) out.push(name);
  }
  for (const name of new Set(publicHosts.map(hostName))) {
    if (name === '') continue;
    if (!out.includes(name)) out.push(name);
    out.push(`${name}:*`);
  }
  return out;
}

/** Why `host` (the request's Host header) is refused, or null when it names this server. */
export function hostProblem(host: string | undefined, allowed: readonly string[]): string | null {
  if (host === undefined || host === '') return 'the request has no Host header';
  const h = host.toLowerCase();
  if (allowed.includes(h)) return null;
  const withPort = /^(.+):\d{1,5}$/.exec(h);
  if (withPort && allowed.includes(`${withPort[1]}:*`)) return null;
  const shown = JSON.stringify(host.slice(0, 100));
  return `Host ${shown} is not this server (use one of ${allowed.join(', ')}); requests through another name are refused`;
}

/** The URL schemes a browser may show the server under. */
export type OriginScheme = 'http' | 'https';

/**
 * Why a cookie request's `Origin` is refused, or null when it is the server's own origin: one of
 * `schemes` (`http` by default; `https` when the server or a proxy in front of it speaks TLS) +
 * `://` + the request's accepted Host.
 */
export function originProblem(origin: string | undefined, host: string, schemes: readonly OriginScheme[] = ['http']): string | null {
  if (origin === undefined || origin === '') return 'a request made with the dashboard cookie needs an Origin header';
  const o = origin.toLowerCase();
  if (schemes.some((scheme) => o === `${scheme}://${host.toLowerCase()}`)) return null;
  const own = schemes.map((scheme) => `${scheme}://${host}`).join(' or ');
  // An https page in front of a plain-HTTP server is a TLS-terminating proxy the server was not told about.
  const hint = o === `https://${host.toLowerCase()}` ? ' (behind a TLS-terminating proxy or Ingress, start berth serve with --secure-cookie)' : '';
  return `Origin ${JSON.stringify(origin.slice(0, 200))} is not this server's origin (${own})${hint}; cross-origin requests are refused`;
}

/** The value of cookie `name` in a Cookie header, if present. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
