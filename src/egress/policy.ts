/**
 * Which destinations a session may reach: its allow list of host names. Pure.
 *
 * An entry is one of
 * - an exact host name (`api.github.com`): matches that name only;
 * - a wildcard `*.example.com`: matches every name below `example.com` (`a.example.com`,
 *   `a.b.example.com`) but not `example.com` itself (list both to allow both); the wildcard must be
 *   the whole leftmost label and cover at least two labels (`*.com` is refused as too broad);
 * - an IP literal (`192.0.2.7`, `2001:db8::1`, `[2001:db8::1]`): matches exactly that address.
 *
 * Matching is case-insensitive and ignores one trailing dot. A name rule never matches an IP literal,
 * so a destination given as an address is reachable only through an entry naming that exact address.
 * Names are compared as given: an internationalized name must be listed in its punycode (`xn--`)
 * form, which is the form clients and URLs put on the wire.
 * @module
 */
import { isIP } from 'node:net';
import { ConfigFieldError } from '../shared/config-field-error.js';

/** One parsed allow-list entry. */
type AllowRule =
  | { readonly kind: 'exact'; readonly host: string }
  | { readonly kind: 'suffix'; readonly suffix: string } // `*.example.com` -> `.example.com`
  | { readonly kind: 'ip'; readonly address: string };

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const MAX_NAME = 253;

/** A host as the proxy compares it: lower case, without one trailing dot or IPv6 brackets. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.') && isIP(h) === 0) h = h.slice(0, -1);
  return h;
}

/** Whether `host` (normalized) is an IPv4 or IPv6 literal. */
export function isIpLiteral(host: string): boolean {
  return isIP(normalizeHost(host)) !== 0;
}

/** Whether `name` (normalized) is a syntactically valid DNS host name. */
function isHostName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_NAME) return false;
  const labels = name.split('.');
  // An all-numeric last label is no name: `127.1` is an address spelled short, not a host name.
  return labels.every((label) => LABEL.test(label)) && !/^\d+$/.test(labels[labels.length - 1]!);
}

/**
 * Parses one allow-list entry; `path` names it in errors (`network.allow[2]`).
 * @throws ConfigFieldError when the entry is not a host name, `*.`host name or IP literal.
 */
export function parseAllowEntry(raw: unknown, path: string): AllowRule {
  if (typeof raw !== 'string') throw new ConfigFieldError(path, 'must be a string (a host name, *.host name or IP address)');
  const shown = JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw);
  // eslint-disable-next-line no-control-regex -- the check is for non-ASCII text
  if (/[^\x00-\x7f]/.test(raw)) throw new ConfigFieldError(path, `${shown} is not ASCII: write an internationalized name in its punycode (xn--) form`);
  const entry = normalizeHost(raw);
  if (isIP(entry) !== 0) return { kind: 'ip', address: canonicalIp(entry) };
  if (entry.startsWith('*.')) {
    const base = entry.slice(2);
    if (!isHostName(base)) throw new ConfigFieldError(path, `${shown} is not a hostname or *.hostname`);
    if (!base.includes('.')) throw new ConfigFieldError(path, `${shown} is too broad: a wildcard must cover at least two labels (*.example.com)`);
    return { kind: 'suffix', suffix: `.${base}` };
  }
  if (!isHostName(entry)) throw new ConfigFieldError(path, `${shown} is not a hostname or *.hostname`);
  return { kind: 'exact', host: entry };
}

/** Parses a whole allow list (`path` is the list's field path, e.g. `network.allow`). */
export function parseAllowList(raw: unknown, path: string): AllowRule[] {
  if (!Array.isArray(raw)) throw new ConfigFieldError(path, 'must be a list of host names');
  return raw.map((entry, i) => parseAllowEntry(entry, `${path}[${String(i)}]`));
}

/** Whether one rule allows `host` (any form: it is normalized here). */
export function ruleMatches(rule: AllowRule, host: string): boolean {
  const h = normalizeHost(host);
  if (isIP(h) !== 0) return rule.kind === 'ip' && rule.address === canonicalIp(h);
  switch (rule.kind) {
    case 'exact':
      return h === rule.host;
    case 'suffix':
      return h.length > rule.suffix.length && h.endsWith(rule.suffix);
    case 'ip':
      return false;
  }
}

/** The matcher of a parsed allow list: true when any rule allows the host. */
export function allowMatcher(rules: readonly AllowRule[]): (host: string) => boolean {
  return (host) => rules.some((rule) => ruleMatches(rule, host));
}

/** One spelling per address (`::0:1` and `::1` are the same rule), via the WHATWG URL parser. */
function canonicalIp(address: string): string {
  if (isIP(address) === 6) return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  return address;
}
