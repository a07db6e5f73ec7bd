/**
 * Redaction of error text before it leaves the process boundary (event stream, inventory row, log).
 * Keeps the cause on the original error for local debugging; only the returned string is cleaned.
 * @module
 */
import { homedir } from 'node:os';

/** Longest sanitized message. */
export const MAX_SANITIZED_LENGTH = 4096;

const TOKEN_PATTERNS: RegExp[] = [
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi,
  /\b(authorization|x-api-key|api[_-]?key|token|password|secret|nonce)(["']?\s*[:=]\s*["']?)[^\s"',;]+/gi,
  /\b(sk|ghp|gho|ghs|ghu|github_pat|xox[abp])[-_][A-Za-z0-9_-]{8,}/g,
  // any opaque run of 32+ token-like characters (hex nonces, bearer tokens, API keys)
  /[A-Za-z0-9_+/=-]{32,}/g,
];

/**
 * Credentials in URLs (`https://user:pass@host`) and query strings. The userinfo runs to the last
 * `@` before the path, so a password with an unencoded `@` is removed whole.
 */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s?#'"]*@/gi;
const URL_QUERY = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s?#]*)\?[^\s#]*/gi;

/**
 * Redacts tokens, URL credentials and query strings and the home directory, and caps the length.
 * Paths inside the data dir are kept on purpose: they are what the user needs to find a workspace.
 */
export function sanitize(text: string, opts: { home?: string } = {}): string {
  let out = text;
  out = out.replace(URL_CREDENTIALS, '$1***@');
  out = out.replace(URL_QUERY, '$1?***');
  for (const re of TOKEN_PATTERNS) {
    out = out.replace(re, (match: string, p1?: string, p2?: string) => {
      if (typeof p1 === 'string' && typeof p2 === 'string') return `${p1}${p2}***`;
      if (typeof p1 === 'string' && /^(Bearer|Basic)$/i.test(p1)) return `${p1} ***`;
      // keep filesystem-looking runs (a/b/c) readable: only redact when no path separators dominate
      if (match.includes('/') && match.split('/').length > 2) return match;
      return '***';
    });
  }
  const home = opts.home ?? safeHome();
  if (home && home.length > 1) out = out.split(home).join('~');
  if (out.length > MAX_SANITIZED_LENGTH) out = `${out.slice(0, MAX_SANITIZED_LENGTH - 3)}...`;
  return out;
}

function safeHome(): string {
  try {
    return homedir();
  } catch {
    return '';
  }
}
