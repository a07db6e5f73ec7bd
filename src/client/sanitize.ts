/**
 * Redaction of secrets from text that ends up in client error messages (server error bodies, causes).
 * @module
 */

/** Longest message text kept from a server or a cause. */
export const MAX_SANITIZED_LENGTH = 1024;

const REDACTED = '***';

// Order matters: exact known secrets first, then the generic shapes a secret is echoed in.
const PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/(authorization\s*[:=]\s*)("?)[^\s",}]+(?:\s+[^\s",}]+)?/gi, `$1$2${REDACTED}`],
  [/\bbearer\s+[^\s",}]+/gi, `Bearer ${REDACTED}`],
  [/("?(?:token|nonce|secret|password)"?\s*[:=]\s*"?)[^\s",}]+/gi, `$1${REDACTED}`],
  // An opaque token-like run (agentctl tokens are 64 hex characters). `/` is left out so paths survive.
  [/[A-Za-z0-9+=_-]{32,}/g, REDACTED],
];

/**
 * Removes `secrets` (exact matches) and anything shaped like a credential from `text`, and caps its
 * length. Used on every piece of text that comes from outside the client before it enters a message.
 */
export function sanitize(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret !== undefined && secret.length > 0) out = out.split(secret).join(REDACTED);
  }
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out.length > MAX_SANITIZED_LENGTH ? `${out.slice(0, MAX_SANITIZED_LENGTH)}…` : out;
}
