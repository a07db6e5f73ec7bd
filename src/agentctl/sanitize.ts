/**
 * Redaction for text that leaves the daemon (error bodies, logs): bearer tokens, long opaque
 * token-like runs and home directories are replaced, and the length is capped.
 * @module
 */

const MAX_LENGTH = 4096;

const PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/(authorization:\s*)\S+(\s+\S+)?/gi, '$1[redacted]'],
  [/bearer\s+\S+/gi, 'Bearer [redacted]'],
  [/\b(?:sk-|ghp_|gho_|github_pat_)[A-Za-z0-9_-]{8,}/g, '[redacted]'],
  // Opaque runs of 32+ token-like characters (our tokens are 64 hex characters). Git object ids
  // (40 hex) would match too, so only runs of 48+ are redacted to keep shas readable.
  [/\b[A-Za-z0-9+_-]{48,}={0,2}/g, '[redacted]'],
  [/\/home\/[^/\s]+/g, '/home/~'],
];

/** Returns `text` with secrets redacted and at most 4 KiB long. */
export function sanitize(text: string): string {
  let out = text;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out.length > MAX_LENGTH ? `${out.slice(0, MAX_LENGTH)}…` : out;
}
