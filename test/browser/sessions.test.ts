/**
 * The dashboard in a real browser against a real `berth serve` with real local sessions: launch from
 * the form and watch the stages arrive, the list follows the CLI, the output streams, the terminal
 * runs a command, the diff viewer shows the agent's edit, stop / resume / remove from the page.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, logIn, newContext, screenshot, startDashboard, type Dashboard } from './support/dashboard.js';

/** The page's getComputedStyle, typed without the DOM library (the callbacks run in the browser). */
interface Styles {
  getComputedStyle(el: unknown): { color: string };
}

describe('dashboard with local sessions', () => {
  let dash: Dashboard;
  let browser: Browser;
  let page: Page;
  let urls: string[];
  let sessionId = '';

  beforeAll(async () => {
    dash = await startDashboard();
    browser = await launchBrowser();
    ({ page, urls } = await newContext(browser));
    await logIn(page, await dash.loginUrl());
  });

  afterAll(async () => {
    await browser?.close();
    await dash?.stop();
  });

  /** The tests after the first work on the session it launched: without one they fail at once, saying so. */
  const launched = (): string => {
    expect(sessionId, 'the first test launched no session (see its failure)').not.toBe('');
    return sessionId;
  };

  it('launches from the form and shows the stages arrive, then the agent output live', async () => {
    await page.getByTestId('sessions-empty').waitFor();
    await screenshot(page, 'sessions-empty');
    // The form shows at once; the config's agents and executors arrive with a request of their own,
    // held back here (as on a slow link or a busy controller: CI once read the selects before it came).
    await page.route('**/api/v1/launch-options', async (route) => {
      await new Promise((r) => setTimeout(r, 800));
      await route.continue();
    });
    await page.getByTestId('nav-launch').click();
    await page.locator('[data-testid="launch-form"][data-options="loading"]').waitFor();
    await page.locator('[data-testid="launch-form"][data-options="loaded"]').waitFor();
    await page.unroute('**/api/v1/launch-options');
    // The config's defaults are preselected.
    expect(await page.getByTestId('launch-agent').inputValue()).toBe('editor');
    expect(await page.getByTestId('launch-executor').inputValue()).toBe('local');
    await page.getByTestId('launch-repository').fill(dash.repo);
    await page.getByTestId('launch-prompt').fill('fix the README');
    await page.getByTestId('launch-env').fill('GREETING=hello');
    await screenshot(page, 'launch-form');
    await page.getByTestId('launch-submit').click();

    await page.getByTestId('session-page').waitFor();
    sessionId = /\/sessions\/([^/?#]+)/.exec(page.url())?.[1] ?? '';
    expect(sessionId).not.toBe('');
    await page.locator('[data-testid="session-page"][data-state="ready"]').waitFor();
    // The state and the last stage's end are separate events: the bars may follow a moment later.
    const bars = (): Promise<string[]> => page.getByTestId('stage-bar').evaluateAll((els) => els.map((b) => `${b.getAttribute('data-stage')}:${b.getAttribute('data-status')}`));
    await expect.poll(bars, { timeout: 10_000 }).toEqual(['workspace', 'agentctl_start', 'agentctl_connect', 'agent_start'].map((n) => `${n}:succeeded`));
    // Each finished stage shows its duration.
    await expect.poll(() => page.getByTestId('stage-duration').count(), { timeout: 10_000 }).toBe(4);

    const output = page.getByTestId('output');
    await expect.poll(() => output.textContent(), { timeout: 20_000 }).toContain('agent> edited README.md');
    expect(await output.textContent()).toContain('green start fix the README');
    // ANSI colours are rendered, not printed as escapes.
    expect(await output.textContent()).not.toContain('\u001b[');
    const colour = await output.getByText('green start').first().evaluate((el) => (globalThis as unknown as Styles).getComputedStyle(el).color);
    expect(colour).not.toBe(await output.evaluate((el) => (globalThis as unknown as Styles).getComputedStyle(el).color));
    await screenshot(page, 'session-ready');
  });

  it('streams new output as the agent prints it (berth send from the CLI)', async () => {
    launched();
    const sent = await dash.cli(['send', sessionId, 'hello from the CLI']);
    expect(sent.code, sent.stderr).toBe(0);
    await expect.poll(() => page.getByTestId('output').textContent(), { timeout: 20_000 }).toContain('agent> you said: hello from the CLI');
    // Replayed from the start and not duplicated.
    const text = (await page.getByTestId('output').textContent()) ?? '';
    expect(text.split('agent> edited README.md').length - 1).toBe(1);
  });

  it("sends a line to the agent's stdin from the page, as berth send does", async () => {
    launched();
    await page.getByTestId('send-input').fill('hello from the page');
    await page.getByTestId('send-submit').click();
    await expect.poll(() => page.getByTestId('output').textContent(), { timeout: 20_000 }).toContain('agent> you said: hello from the page');
  });

  it("shows the agent's edit in the diff viewer and the git status", async () => {
    launched();
    await expect.poll(() => page.getByTestId('change-status').textContent(), { timeout: 20_000 }).toContain('README.md');
    await expect.poll(() => page.getByTestId('diff').textContent(), { timeout: 20_000 }).toContain('edited by the agent');
    await page.getByTestId('file-tree').getByText('README.md').first().click();
    await expect.poll(() => page.getByTestId('file-view').textContent(), { timeout: 20_000 }).toContain('edited by the agent');
    // no `network:` on the profile: the network panel says why it has no connection to show
    await expect.poll(() => page.getByTestId('egress-empty').textContent(), { timeout: 20_000 }).toContain('No connection recorded');
    await screenshot(page, 'session-change');
  });

  it('runs a command in the terminal (a real PTY) and shows its answer', async () => {
    launched();
    await page.getByTestId('terminal-open').click();
    const term = page.getByTestId('terminal');
    await term.waitFor();
    // typed once the shell shows its prompt, as a person does (typeahead sent while the shell still
    // starts can lose its first keystroke on a loaded machine: seen once, 'cho $((6*7))')
    await expect.poll(async () => /\$\s*$/.test(((await term.innerText()) ?? '').trimEnd() + ' '), { timeout: 20_000 }).toBe(true);
    await term.click();
    await page.keyboard.type('echo $((6*7))');
    await page.keyboard.press('Enter');
    // xterm renders rows as text; the shell echoes the command, then prints the answer on a line of its own.
    let shown = '';
    const answered = expect.poll(
      async () => {
        shown = (await term.innerText()) ?? '';
        return shown.split('\n').some((l) => l.trim() === '42');
      },
      { timeout: 20_000 },
    );
    await answered.toBe(true).catch(async (err: unknown) => {
      const bar = await page.locator('.terminal-bar').innerText().catch(() => '?');
      throw new Error(`the terminal showed no line "42"; it showed:\n${shown}\n(its bar: ${bar}; ${String(err)})`);
    });
    await screenshot(page, 'session-terminal');
  });

  it('follows a stop made from the CLI in the sessions list, then resumes from the page', async () => {
    launched();
    await page.goto(`${dash.origin}/`);
    const row = page.locator(`[data-testid="session-row"][data-session-id="${sessionId}"]`);
    await expect.poll(() => row.getAttribute('data-state'), { timeout: 20_000 }).toBe('ready');
    const stopped = await dash.cli(['stop', sessionId]);
    expect(stopped.code, stopped.stderr).toBe(0);
    // No reload: the SSE stream brings the change.
    await expect.poll(() => row.getAttribute('data-state'), { timeout: 20_000 }).toBe('stopped');
    await screenshot(page, 'sessions-list');

    await row.locator('a').first().click();
    await page.getByTestId('session-page').waitFor();
    await page.getByTestId('action-resume').click();
    await page.locator('[data-testid="session-page"][data-state="ready"]').waitFor({ timeout: 30_000 });
    const status = await dash.cli(['status', sessionId, '-o', 'json']);
    expect(JSON.parse(status.stdout).state).toBe('ready');
  });

  it('stops from the page, and removes after a confirmation that names what is deleted', async () => {
    launched();
    await page.getByTestId('action-stop').click();
    await page.locator('[data-testid="session-page"][data-state="stopped"]').waitFor({ timeout: 30_000 });
    await page.getByTestId('action-remove').click();
    const dialog = page.getByTestId('confirm-dialog');
    await dialog.waitFor();
    expect(await page.getByTestId('confirm-text').textContent()).toMatch(/workspace/i);
    await screenshot(page, 'confirm-remove');
    await page.getByTestId('confirm-no').click();
    // Cancelled: nothing removed.
    expect((await dash.cli(['status', sessionId])).code).toBe(0);
    await page.getByTestId('action-remove').click();
    await page.getByTestId('confirm-yes').click();
    await page.getByTestId('sessions-empty').or(page.getByTestId('sessions-list')).first().waitFor();
    await expect.poll(async () => (await dash.cli(['status', sessionId])).code, { timeout: 20_000 }).not.toBe(0);
  });

  it('never put the API token or the login code in a URL it requested, nor in the server log', async () => {
    const { readFileSync } = await import('node:fs');
    const token = readFileSync(`${dash.dataDir}/state/api-token`, 'utf8').trim();
    expect(token.length).toBeGreaterThan(10);
    expect(urls.length).toBeGreaterThan(5);
    for (const url of urls) {
      expect(url).not.toContain(token);
      expect(url).not.toMatch(/[?&]token=/);
    }
    expect(dash.output()).not.toContain(token);
    expect(dash.output()).not.toMatch(/code=[A-Za-z0-9_-]{10,}/);
  });
});
