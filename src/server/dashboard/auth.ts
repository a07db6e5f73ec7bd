/**
 * Dashboard login state of one `berth serve` process, in memory: one-time login codes (5 min,
 * single use) and cookie sessions (12 h idle expiry), each with its CSRF token. Codes and cookie
 * ids are kept only as sha256: a heap dump or a log of this state holds nothing to log in with.
 *
 * The cookie alone grants nothing. Browsers send a host's cookies to every port of it, so any
 * local listener the user's browser visits (an agent's dev server on 127.0.0.1) receives the
 * cookie; it never sees the CSRF token, which is handed out once, in the answer to the code
 * exchange, and which every cookie request must present. No method here returns the token of an
 * existing session.
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { tokenMatches } from '../../shared/http/index.js';

/** Every serve's cookie name starts with this; a random suffix makes it per serve. */
const COOKIE_PREFIX = 'berth_session_';
export const CODE_TTL_MS = 5 * 60_000;
export const SESSION_IDLE_MS = 12 * 60 * 60_000;
/** Bounds on what unauthenticated callers can make this process remember. */
const MAX_CODES = 100;
const MAX_SESSIONS = 1000;
/** CSRF tokens one cookie session keeps (one per tab logged in with the same browser); the oldest goes first. */
const MAX_TOKENS_PER_SESSION = 20;

const hash = (secret: string): string => createHash('sha256').update(secret).digest('hex');
const secret = (): string => randomBytes(32).toString('base64url');

interface CookieSession {
  /** One per login of this browser (a tab each): the browser shares one cookie across its tabs. */
  csrf: string[];
  lastSeen: number;
}

/** What a cookie and a presented CSRF token amount to. */
export type CookieCheck = 'ok' | 'no_session' | 'wrong_csrf';

interface DashboardAuthOptions {
  /** @default Date.now */
  now?: () => number;
  codeTtlMs?: number;
  idleMs?: number;
  /** @default `berth_session_` + 12 random hex digits (a serve's cookie is not even named like another's) */
  cookieName?: string;
  /** Whether the cookie is `Secure` (sent over HTTPS only): when the server, or a proxy in front of it, speaks TLS. @default false */
  secure?: boolean;
}

export class DashboardAuth {
  /** The name of this serve's session cookie. */
  readonly cookieName: string;
  readonly #codes = new Map<string, number>(); // sha256(code) → expiry
  readonly #sessions = new Map<string, CookieSession>(); // sha256(cookie id) → session
  readonly #now: () => number;
  readonly #codeTtlMs: number;
  readonly #idleMs: number;
  readonly #attributes: string;

  constructor(opts: DashboardAuthOptions = {}) {
    this.#now = opts.now ?? Date.now;
    this.#codeTtlMs = opts.codeTtlMs ?? CODE_TTL_MS;
    this.#idleMs = opts.idleMs ?? SESSION_IDLE_MS;
    this.cookieName = opts.cookieName ?? `${COOKIE_PREFIX}${randomBytes(6).toString('hex')}`;
    this.#attributes = `HttpOnly; SameSite=Strict; Path=/${opts.secure === true ? '; Secure' : ''}`;
    if (!/^[A-Za-z0-9_]+$/.test(this.cookieName)) throw new TypeError('DashboardAuth: cookieName must be letters, digits and _');
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

  /**
   * Exchanges a code (once) for a CSRF token: the only time a token is handed out. The token joins
   * the session of `cookie` when that is live (another tab of the same browser: the browser has
   * one cookie for all its tabs, and a new one would log the other tabs out), else a new cookie
   * session starts. Null for a used, unknown or expired code.
   */
  redeem(code: string, cookie?: string): { cookie: string; csrf: string } | null {
    const key = hash(code);
    const expires = this.#codes.get(key);
    this.#codes.delete(key);
    if (expires === undefined || expires <= this.#now()) return null;
    const live = cookie !== undefined && cookie !== '' ? this.#live(hash(cookie)) : null;
    if (cookie !== undefined && live !== null) {
      const csrf = secret();
      live.csrf.push(csrf);
      if (live.csrf.length > MAX_TOKENS_PER_SESSION) live.csrf.shift();
      live.lastSeen = this.#now();
      return { cookie, csrf };
    }
    this.#sweep();
    if (this.#sessions.size >= MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest !== undefined) this.#sessions.delete(oldest);
    }
    const fresh = secret();
    const csrf = secret();
    this.#sessions.set(hash(fresh), { csrf: [csrf], lastSeen: this.#now() });
    return { cookie: fresh, csrf };
  }

  /**
   * Whether `cookie` names a live session and `csrf` is its token. Only a full match restarts the
   * idle clock: a captured cookie replayed alone neither works nor keeps the session alive.
   */
  check(cookie: string | undefined, csrf: string | undefined): CookieCheck {
    if (cookie === undefined || cookie === '') return 'no_session';
    const s = this.#live(hash(cookie));
    if (!s) return 'no_session';
    // Every token is compared (constant time each), so the time taken does not tell which matched.
    let matched = false;
    for (const token of s.csrf) matched = tokenMatches(csrf, token) || matched;
    if (!matched) return 'wrong_csrf';
    s.lastSeen = this.#now();
    return 'ok';
  }

  /** Ends the cookie's session (a no-op for an unknown one). */
  logout(cookie: string | undefined): void {
    if (cookie !== undefined) this.#sessions.delete(hash(cookie));
  }

  /** The Set-Cookie value that starts a dashboard session. */
  sessionCookie(value: string): string {
    return `${this.cookieName}=${value}; ${this.#attributes}`;
  }

  /** The Set-Cookie value that clears it. */
  clearedCookie(): string {
    return `${this.cookieName}=; ${this.#attributes}; Max-Age=0`;
  }

  /** The session under `key` unless it has idled out (then it is forgotten). */
  #live(key: string): CookieSession | null {
    const s = this.#sessions.get(key);
    if (!s) return null;
    if (this.#now() - s.lastSeen >= this.#idleMs) {
      this.#sessions.delete(key);
      return null;
    }
    return s;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [k, expires] of this.#codes) if (expires <= now) this.#codes.delete(k);
    for (const [k, s] of this.#sessions) if (now - s.lastSeen >= this.#idleMs) this.#sessions.delete(k);
  }
}
