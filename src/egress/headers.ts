/**
 * The headers a proxy forwards: everything but the hop-by-hop ones (RFC 9110 7.6.1), the proxy's own
 * credentials and whatever `Connection` names. Pure.
 * @module
 */

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The end-to-end headers of `rawHeaders` (Node's flat [name, value, …] list) as [name, value] pairs,
 * names in their original case; `drop` lists more (lower-case) names to leave out.
 */
export function endToEndHeaders(rawHeaders: readonly string[], drop: readonly string[] = []): [string, string][] {
  const named = new Set(drop);
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== 'connection') continue;
    for (const token of rawHeaders[i + 1]!.split(',')) named.add(token.trim().toLowerCase());
  }
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (!HOP_BY_HOP.has(lower) && !named.has(lower)) out.push([name, rawHeaders[i + 1]!]);
  }
  return out;
}
