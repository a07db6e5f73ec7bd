/**
 * Dashboard login state of one `berth serve` process, in memory: one-time login codes (5 min,
 * single use) and cookie sessions (12 h idle expiry), each with its CSRF token. Codes and cookie
 * ids are kept only as sha256: a heap dump or a log of this state holds nothing to log in with.
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { tokenMatches } from '../http-util.js';

export const DASHBOARD_COOKIE = 'berth_session';
export const CODE_TTL_MS = 5 * 60_000;
export const SESSION_IDLE_MS = 12 * 60 * 60_000;
/** Bounds on what unauthenticated callers can make this process remember. */
const MAX_CODES = 100;
const MAX_SESSIONS = 1000;

const hash = (secret: string): string => createHash('sha256').update(secret).digest('hex');
const secret = (): string => randomBytes(32).toString('base64url');

interface CookieSession {
  csrf: string;
  lastSeen: number;
}

export interface DashboardAuthOptions {
  /** @default Date.now */
  now?: () => number;
  codeTtlMs?: number;
  idleMs?: number;
}

export class DashboardAuth {
  readonly #codes = new Map<string, number>(); // sha256(code) → expiry
  readonly #sessions = new Map<string, CookieSession>(); // sha256(cookie id) → session
  readonly #now: () => number;
  readonly #codeTtlMs: number;
  readonly #idleMs: number;

  constructor(opts: DashboardAuthOptions = {}) {
    this.#now = opts.now ?? Date.now;
    this.#codeTtlMs = opts.codeTtlMs ?? CODE_TTL_MS;
    this.#idleMs = opts.idleMs ?? SESSION_IDLE_MS;
  }

  /** A new login code (the caller is already authenticated with the bearer token). */
  issueCode(): { code: string; expiresAt: string } {
    this.#sweep();
    if (this.#codes.size >= MAX_CODES) {
      // The oldest pending code goes first (Map keeps insertion order).
      const oldest = this.#codes.keys().next().value;
      if (oldest !== undefined) this.#codes.delete(oldest);
    }
    const code = secret();
    const expires = this.#now() + this.#codeTtlMs;
    this.#codes.set(hash(code), expires);
    return { code, expiresAt: new Date(expires).toISOString() };
  }

  /** Exchanges a code (once) for a new cookie session; null for a used, unknown or expired code. */
  redeem(code: string): { cookie: string; csrf: string } | null {
    const key = hash(code);
    const expires = this.#codes.get(key);
    this.#codes.delete(key);
    if (expires === undefined || expires <= this.#now()) return null;
    this.#sweep();
    if (this.#sessions.size >= MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest !== undefined) this.#sessions.delete(oldest);
    }
    const cookie = secret();
    const csrf = secret();
    this.#sessions.set(hash(cookie), { csrf, lastSeen: this.#now() });
    return { cookie, csrf };
  }

  /** The live session of a cookie value (its idle clock restarts), or null. */
  session(cookie: string | undefined): { csrf: string } | null {
    if (cookie === undefined || cookie === '') return null;
    const key = hash(cookie);
    const s = this.#sessions.get(key);
    if (!s) return null;
    const now = this.#now();
    if (now - s.lastSeen >= this.#idleMs) {
      this.#sessions.delete(key);
      return null;
    }
    s.lastSeen = now;
    return { csrf: s.csrf };
  }

  /** Whether `presented` is the CSRF token of the cookie's session. */
  csrfMatches(cookie: string | undefined, presented: string | undefined): boolean {
    const s = this.session(cookie);
    return s !== null && tokenMatches(presented, s.csrf);
  }

  /** Ends the cookie's session (a no-op for an unknown one). */
  logout(cookie: string | undefined): void {
    if (cookie !== undefined) this.#sessions.delete(hash(cookie));
  }

  #sweep(): void {
    const now = this.#now();
    for (const [k, expires] of this.#codes) if (expires <= now) this.#codes.delete(k);
    for (const [k, s] of this.#sessions) if (now - s.lastSeen >= this.#idleMs) this.#sessions.delete(k);
  }
}

/** The Set-Cookie value that starts a dashboard session. */
export function sessionCookie(value: string): string {
  return `${DASHBOARD_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/`;
}

/** The Set-Cookie value that clears it. */
export function clearedCookie(): string {
  return `${DASHBOARD_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;
}
