/**
 * A tiny method + path router: patterns are `/`-separated segments where `:name` captures one
 * non-empty (percent-decoded) segment. Paths match segment by segment, so `/a/` is not `/a`.
 * Matching tells "unknown path" (404) apart from "wrong method" (405) and a malformed
 * percent-encoding (400).
 * @module
 */

export type Params = Readonly<Record<string, string>>;

type RouteMatch<H> =
  | { readonly kind: 'found'; readonly handler: H; readonly params: Params }
  | { readonly kind: 'method_not_allowed'; readonly allowed: readonly string[] }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'bad_path' };

interface Route<H> {
  readonly method: string;
  readonly segments: readonly string[];
  readonly handler: H;
}

export class Router<H> {
  readonly #routes: Route<H>[] = [];

  /**
   * Registers `handler` for `method` and `pattern`, e.g. `/api/v1/processes/:id`. Pattern segments
   * are percent-decoded, so patterns built with the (encoding) route helpers of the wire modules work.
   */
  add(method: string, pattern: string, handler: H): this {
    this.#routes.push({ method: method.toUpperCase(), segments: pattern.split('/').map(decodeURIComponent), handler });
    return this;
  }

  /** Matches a request path (no query string). */
  match(method: string, path: string): RouteMatch<H> {
    const parts = path.split('/');
    const allowed: string[] = [];
    for (const route of this.#routes) {
      const params = matchSegments(route.segments, parts);
      if (params === null) continue;
      if (params === 'bad') return { kind: 'bad_path' };
      if (route.method === method.toUpperCase()) return { kind: 'found', handler: route.handler, params };
      if (!allowed.includes(route.method)) allowed.push(route.method);
    }
    return allowed.length > 0 ? { kind: 'method_not_allowed', allowed } : { kind: 'not_found' };
  }
}

function matchSegments(pattern: readonly string[], parts: readonly string[]): Record<string, string> | null | 'bad' {
  if (pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i] as string;
    const got = parts[i] as string;
    if (want.startsWith(':') && got !== '') {
      try {
        params[want.slice(1)] = decodeURIComponent(got);
      } catch {
        return 'bad';
      }
    } else if (want !== got) {
      return null;
    }
  }
  return params;
}
