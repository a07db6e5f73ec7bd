import { describe, expect, it } from 'vitest';
import { clearedCookie, CODE_TTL_MS, DashboardAuth, SESSION_IDLE_MS, sessionCookie } from './auth.js';

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
  it('knows the cookie and its CSRF token; nothing else', () => {
    const { auth } = clocked();
    const s = auth.redeem(auth.issueCode().code);
    if (!s) throw new Error('no session');
    expect(auth.session(s.cookie)).toEqual({ csrf: s.csrf });
    expect(auth.session('forged')).toBeNull();
    expect(auth.csrfMatches(s.cookie, s.csrf)).toBe(true);
    expect(auth.csrfMatches(s.cookie, 'wrong')).toBe(false);
    expect(auth.csrfMatches(s.cookie, undefined)).toBe(false);
    expect(auth.csrfMatches('forged', s.csrf)).toBe(false);
  });

  it('expires after 12 hours unused, and use keeps it alive', () => {
    const { auth, advance } = clocked();
    const s = auth.redeem(auth.issueCode().code);
    if (!s) throw new Error('no session');
    advance(SESSION_IDLE_MS - 1);
    expect(auth.session(s.cookie)).not.toBeNull();
    advance(SESSION_IDLE_MS - 1);
    expect(auth.session(s.cookie)).not.toBeNull();
    advance(SESSION_IDLE_MS);
    expect(auth.session(s.cookie)).toBeNull();
  });

  it('ends a session at logout', () => {
    const { auth } = clocked();
    const s = auth.redeem(auth.issueCode().code);
    if (!s) throw new Error('no session');
    auth.logout(s.cookie);
    expect(auth.session(s.cookie)).toBeNull();
  });
});

describe('cookie headers', () => {
  it('are HttpOnly, SameSite=Strict, for the whole site', () => {
    expect(sessionCookie('abc')).toBe('berth_session=abc; HttpOnly; SameSite=Strict; Path=/');
    expect(clearedCookie()).toMatch(/^berth_session=; HttpOnly; SameSite=Strict; Path=\/; Max-Age=0$/);
  });
});
