/**
 * The dashboard's defences, in a real browser: a one-time login code, a cookie that another page
 * on the same machine cannot use (Origin + CSRF checks on calls, Origin on the WebSocket) and that
 * is worth nothing to a local listener it is sent to, a login that survives a reload of its tab,
 * the `--open` redirect page, no access under a foreign Host name (DNS rebinding), and a strict
 * CSP the app itself never trips.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLoginPage } from '../../src/cli/commands/dashboard-page.js';
import { CHROMIUM, launchBrowser, logIn, newContext, startDashboard, type Dashboard } from './support/dashboard.js';
import { chromium } from 'playwright-core';

/** A page on another origin (another port of 127.0.0.1: the same site, so the cookie is sent). */
function foreignPage(target: string, sessionId: string): string {
  const script = `
    window.results = {};
    fetch(${JSON.stringify(`${target}/api/v1/sessions/${sessionId}/stop`)}, { method: 'POST', mode: 'no-cors', credentials: 'include' })
      .then(() => { window.results.fetch = 'sent'; }, (e) => { window.results.fetch = 'error ' + e; });
    const ws = new WebSocket(${JSON.stringify(`${target.replace('http', 'ws')}/api/v1/sessions/${sessionId}/shell`)});
    ws.onopen = () => { window.results.ws = 'open'; };
    ws.onclose = () => { window.results.ws = window.results.ws || 'refused'; };`;
  return `<!doctype html><title>elsewhere</title><script>${script}</script>`;
}

describe('dashboard security', () => {
  let dash: Dashboard;
  let browser: Browser;
  let foreign: Server | undefined;

  beforeAll(async () => {
    dash = await startDashboard();
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (foreign ? foreign.close(() => resolve()) : resolve()));
    await dash?.stop();
  });

  it('takes a login code once: the same link in another browser is refused, and the code leaves the address bar', async () => {
    const url = await dash.loginUrl();
    const first = await newContext(browser);
    await logIn(first.page, url);
    expect(first.page.url()).not.toContain('code=');
    const cookies = await first.context.cookies();
    const session = cookies.find((c) => /^berth_session_[0-9a-f]{12}$/.test(c.name));
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Strict');
    // The cookie is not readable by the page's scripts.
    expect(await first.page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).not.toContain('berth_session');

    const second = await newContext(browser);
    await second.page.goto(url);
    await second.page.getByTestId('login-error').or(second.page.getByTestId('login-required')).first().waitFor();
    expect(await second.page.getByTestId('sessions-list').count()).toBe(0);
    expect(await second.page.getByTestId('sessions-empty').count()).toBe(0);
    await first.context.close();
    await second.context.close();
  });

  it('refuses a call and a WebSocket from a page on another origin, though the browser sends the cookie', async () => {
    const launched = await dash.cli(['launch', '--detach', '--repo', dash.repo]);
    expect(launched.code, launched.stderr).toBe(0);
    const id = launched.stdout.trim();
    const { context, page } = await newContext(browser);
    await logIn(page, await dash.loginUrl());
    await expect.poll(async () => JSON.parse((await dash.cli(['status', id, '-o', 'json'])).stdout).state, { timeout: 30_000 }).toBe('ready');

    // A listener on another port of 127.0.0.1 (an agent's dev server) receives the dashboard's cookie.
    const captured: string[] = [];
    foreign = createServer((req, res) => {
      if (req.headers.cookie) captured.push(req.headers.cookie);
      res.writeHead(200, { 'content-type': 'text/html' }).end(foreignPage(dash.origin, id));
    });
    await new Promise<void>((resolve) => foreign?.listen(0, '127.0.0.1', () => resolve()));
    const elsewhere = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/`;
    const attacker = await context.newPage();
    await attacker.goto(elsewhere);
    await expect.poll(() => attacker.evaluate(() => JSON.stringify((globalThis as unknown as { results: unknown }).results)), { timeout: 15_000 }).toMatch(/"ws":"refused"/);
    const results = await attacker.evaluate(() => (globalThis as unknown as { results: { fetch?: string; ws?: string } }).results);
    expect(results.ws).toBe('refused');
    await expect.poll(() => attacker.evaluate(() => (globalThis as unknown as { results: { fetch?: string } }).results.fetch), { timeout: 15_000 }).toBeDefined();
    // The forged stop did nothing.
    expect(JSON.parse((await dash.cli(['status', id, '-o', 'json'])).stdout).state).toBe('ready');
    // The cookie it captured, replayed from outside a browser, gets nothing, not even the CSRF token.
    const cookie = captured.find((c) => c.includes('berth_session_'));
    expect(cookie, 'the browser sent the cookie to the other port').toBeDefined();
    for (const path of ['/api/v1/dashboard/session', '/api/v1/sessions', `/api/v1/sessions/${id}/logs`]) {
      const res = await fetch(`${dash.origin}${path}`, { headers: { cookie: cookie ?? '', origin: dash.origin } });
      expect(res.status, path).toBe(401);
      expect(await res.text(), path).not.toMatch(/csrf"|"sessions"|"output"/);
    }
    const replayedStop = await fetch(`${dash.origin}/api/v1/sessions/${id}/stop`, { method: 'POST', headers: { cookie: cookie ?? '', origin: dash.origin } });
    expect(replayedStop.status).toBe(401);
    expect(JSON.parse((await dash.cli(['status', id, '-o', 'json'])).stdout).state).toBe('ready');
    await context.close();
  });

  it('keeps the login across a reload of its tab; a new tab asks for a link of its own, which logs no other tab out', async () => {
    const { context, page } = await newContext(browser);
    await logIn(page, await dash.loginUrl());
    await page.reload();
    await page.getByTestId('sessions-list').or(page.getByTestId('sessions-empty')).first().waitFor();
    const other = await context.newPage();
    await other.goto(`${dash.origin}/`);
    await other.getByTestId('login-required').waitFor();
    expect(await other.getByTestId('login-error').count()).toBe(0);
    await logIn(other, await dash.loginUrl());
    await page.reload();
    await page.getByTestId('sessions-list').or(page.getByTestId('sessions-empty')).first().waitFor();
    expect(await page.getByTestId('login-required').count()).toBe(0);
    await context.close();
  });

  it('logs in through the page `berth dashboard --open` hands to xdg-open (file:// redirecting to the link)', async () => {
    const file = writeLoginPage(dash.dataDir, await dash.loginUrl(), new Date());
    const { context, page } = await newContext(browser);
    await page.goto(pathToFileURL(file).href);
    await page.getByTestId('sessions-list').or(page.getByTestId('sessions-empty')).first().waitFor();
    expect(page.url()).toBe(`${dash.origin}/`);
    await context.close();
  });

  it('answers nothing under a foreign Host name (DNS rebinding), even to a logged-in browser', async () => {
    const rebinding = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--host-resolver-rules=MAP rebind.test 127.0.0.1'],
    });
    try {
      const page = await (await rebinding.newContext()).newPage();
      const index = await page.goto(`http://rebind.test:${dash.port}/`);
      expect(index?.status()).toBeGreaterThanOrEqual(400);
      const api = await page.goto(`http://rebind.test:${dash.port}/api/v1/sessions`);
      expect(api?.status()).toBeGreaterThanOrEqual(400);
      expect(await api?.text()).not.toContain('"sessions"');
    } finally {
      await rebinding.close();
    }
  });

  it('serves the app under a strict Content-Security-Policy that the app itself never violates', async () => {
    const { context, page } = await newContext(browser);
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    const response = await page.goto(`${dash.origin}/`);
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    await page.getByTestId('login-required').waitFor();
    await logIn(page, await dash.loginUrl());
    expect(violations).toEqual([]);
    await context.close();
  });
});
