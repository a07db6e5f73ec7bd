import { describe, expect, it } from 'vitest';
import { CODE_TTL_MS, DashboardAuth, SESSION_IDLE_MS } from './auth.js';

function clocked(): { auth: DashboardAuth; advance: (ms: number) => void } {
  let now = 1_000_000;
  return { auth: new DashboardAuth({ now: () => now }), advance: (ms) => (now += ms) };
}

describe('DashboardAuth login codes', () => {
  it('issues 32 random bytes, base64url, with their expiry 5 minutes on', () => {
    const { auth } = clocked();
    const a = auth.issueCode();
    expect(Buffer.from(a.code, 'base64url')).toHaveLength(32);
    expect(a.code).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(a.code).not.toBe(auth.issueCode().code);
    expect(Date.parse(a.expiresAt)).toBe(1_000_000 + CODE_TTL_MS);
  });

  it('redeems a code once', () => {
    const { auth } = clocked();
    const { code } = auth.issueCode();
    const first = auth.redeem(code);
    expect(first).not.toBeNull();
    expect(auth.redeem(code)).toBeNull();
  });

  it('refuses an expired or unknown code', () => {
    const { auth, advance } = clocked();
    const { code } = auth.issueCode();
    advance(CODE_TTL_MS);
    expect(auth.redeem(code)).toBeNull();
    expect(auth.redeem('not-a-code')).toBeNull();
  });
});

describe('DashboardAuth cookie sessions', () => {
  function loggedIn(): { auth: DashboardAuth; advance: (ms: number) => void; cookie: string; csrf: string } {
    const c = clocked();
    const s = c.auth.redeem(c.auth.issueCode().code);
    if (!s) throw new Error('no session');
    return { ...c, ...s };
  }

  it('accepts the cookie only together with its CSRF token', () => {
    const { auth, cookie, csrf } = loggedIn();
    expect(auth.check(cookie, csrf)).toBe('ok');
    expect(auth.check(cookie, undefined)).toBe('wrong_csrf');
    expect(auth.check(cookie, '')).toBe('wrong_csrf');
    expect(auth.check(cookie, 'wrong')).toBe('wrong_csrf');
    expect(auth.check('forged', csrf)).toBe('no_session');
    expect(auth.check(undefined, csrf)).toBe('no_session');
    expect(auth.check('', csrf)).toBe('no_session');
  });

  it('gives each session its own CSRF token', () => {
    const { auth, cookie, csrf } = loggedIn();
    const other = auth.redeem(auth.issueCode().code);
    if (!other) throw new Error('no session');
    expect(other.csrf).not.toBe(csrf);
    expect(auth.check(cookie, other.csrf)).toBe('wrong_csrf');
    expect(auth.check(other.cookie, csrf)).toBe('wrong_csrf');
  });

  it("adds a second login of the same browser (another tab) to its cookie's session: both tokens work", () => {
    const { auth, cookie, csrf } = loggedIn();
    const tab = auth.redeem(auth.issueCode().code, cookie);
    expect(tab?.cookie).toBe(cookie);
    expect(tab?.csrf).not.toBe(csrf);
    expect(auth.check(cookie, csrf)).toBe('ok');
    expect(auth.check(cookie, tab?.csrf)).toBe('ok');
    // Without a (live) cookie, a login starts a session of its own.
    const other = auth.redeem(auth.issueCode().code, 'forged');
    expect(other?.cookie).not.toBe(cookie);
    expect(auth.check(cookie, other?.csrf)).toBe('wrong_csrf');
    // A used code adds nothing, even with the cookie.
    expect(auth.redeem('not-a-code', cookie)).toBeNull();
  });

  it('never tells the CSRF token of a session to anyone holding only its cookie', () => {
    const { auth, cookie, csrf } = loggedIn();
    // Every method but the code exchange, called with the cookie: nothing it returns holds the token.
    const methods = Object.getOwnPropertyNames(DashboardAuth.prototype).filter((m) => m !== 'constructor' && m !== 'redeem' && m !== 'logout');
    expect(methods).toContain('check');
    methods.push('logout'); // last: the session is live for every other call
    for (const m of methods) {
      const out: unknown = (auth as unknown as Record<string, (...args: unknown[]) => unknown>)[m]?.(cookie, undefined);
      expect(JSON.stringify(out ?? null), m).not.toContain(csrf);
    }
    expect(JSON.stringify(auth)).not.toContain(csrf);
  });

  it('expires after 12 hours unused; only a use with the CSRF token keeps it alive', () => {
    const { auth, advance, cookie, csrf } = loggedIn();
    advance(SESSION_IDLE_MS - 1);
    expect(auth.check(cookie, csrf)).toBe('ok');
    advance(SESSION_IDLE_MS - 1);
    // A captured cookie replayed alone does not restart the idle clock.
    expect(auth.check(cookie, undefined)).toBe('wrong_csrf');
    advance(1);
    expect(auth.check(cookie, csrf)).toBe('no_session');
  });

  it('ends a session at logout', () => {
    const { auth, cookie, csrf } = loggedIn();
    auth.logout(cookie);
    expect(auth.check(cookie, csrf)).toBe('no_session');
  });
});

describe('cookie headers', () => {
  it('name the cookie per serve: berth_session_ and 12 random hex digits', () => {
    const a = new DashboardAuth();
    const b = new DashboardAuth();
    expect(a.cookieName).toMatch(/^berth_session_[0-9a-f]{12}$/);
    expect(b.cookieName).not.toBe(a.cookieName);
  });

  it('are HttpOnly, SameSite=Strict, for the whole site', () => {
    const auth = new DashboardAuth({ cookieName: 'berth_session_x1' });
    expect(auth.sessionCookie('abc')).toBe('berth_session_x1=abc; HttpOnly; SameSite=Strict; Path=/');
    expect(auth.clearedCookie()).toBe('berth_session_x1=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0');
  });

  it('marks both cookies Secure when asked (TLS here or at an Ingress)', () => {
    const auth = new DashboardAuth({ cookieName: 'berth_session_x1', secure: true });
    expect(auth.sessionCookie('abc')).toBe('berth_session_x1=abc; HttpOnly; SameSite=Strict; Path=/; Secure');
    expect(auth.clearedCookie()).toBe('berth_session_x1=; HttpOnly; SameSite=Strict; Path=/; Secure; Max-Age=0');
  });

  it('refuses a cookie name that would break the header, naming the option', () => {
    expect(() => new DashboardAuth({ cookieName: 'a=b; x' })).toThrow(/cookieName/);
  });
});
