/**
 * Bearer tokens: reading `Authorization: Bearer <token>` and comparing secrets in constant time.
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The scheme name is case-insensitive (RFC 9110 §11.1); the token is not. */
const BEARER = /^Bearer\s+(\S+)\s*$/i;

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Constant-time comparison of a presented secret with the expected one. Both sides are hashed
 * first, so the comparison leaks neither content nor length; nothing matches a missing side.
 */
export function tokenMatches(presented: string | undefined, expected: string | null): boolean {
  if (presented === undefined || expected === null) return false;
  return timingSafeEqual(digest(presented), digest(expected));
}

/** The token of `Authorization: Bearer …`, if the request has one. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
}
