/**
 * An ACP session in the dashboard, in a real browser against a real `berth serve` with the built-in
 * `demo-acp` agent (it asks permission before it writes a file): the permission request shows with
 * its diff, Allow writes the file and the turn ends with its usage; a turn sent from the page is
 * denied and leaves its file unwritten; the sessions list marks a session waiting for a person; a
 * slow turn is cancelled from the page; a session stopped and resumed from the page shows the
 * conversation the agent restored, says it continued, and its usage still counts the first run's.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, logIn, newContext, screenshot, startDashboard, type Dashboard } from './support/dashboard.js';

describe('dashboard with an ACP session (demo-acp)', () => {
  let dash: Dashboard;
  let browser: Browser;
  let page: Page;
  let sessionId = '';

  beforeAll(async () => {
    dash = await startDashboard();
    browser = await launchBrowser();
    ({ page } = await newContext(browser));
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
  const fileExists = async (name: string): Promise<boolean> => (await dash.cli(['exec', sessionId, '--', 'test', '-e', name])).code === 0;
  const transcript = (): Promise<string> => page.getByTestId('acp-transcript').textContent().then((t) => t ?? '');
  const openSession = async (): Promise<void> => {
    await page.goto(`${dash.origin}/sessions/${encodeURIComponent(sessionId)}`);
    await page.getByTestId('acp-panel').waitFor();
  };

  it('shows the permission request with its diff; Allow writes the file and the turn ends with its usage', async () => {
    await page.getByTestId('nav-launch').click();
    await page.locator('[data-testid="launch-form"][data-options="loaded"]').waitFor();
    await page.getByTestId('launch-agent').selectOption('demo-acp');
    await page.getByTestId('launch-repository').fill(dash.repo);
    await page.getByTestId('launch-prompt').fill('please write NOTES-web.md');
    await page.getByTestId('launch-env').fill('BERTH_DEMO_STEP_MS=0');
    await page.getByTestId('launch-submit').click();
    await page.getByTestId('session-page').waitFor();
    sessionId = /\/sessions\/([^/?#]+)/.exec(page.url())?.[1] ?? '';
    expect(sessionId).not.toBe('');
    await page.locator('[data-testid="session-page"][data-state="ready"]').waitFor({ timeout: 30_000 });

    const request = page.getByTestId('acp-permission');
    await request.waitFor({ timeout: 30_000 });
    expect(await request.getByTestId('acp-tool-title').textContent()).toBe('Write NOTES-web.md');
    expect(await request.getByTestId('acp-tool-locations').textContent()).toContain('NOTES-web.md');
    const diff = (await request.getByTestId('acp-diff').textContent()) ?? '';
    expect(diff).toContain("+Written by Berth's demo ACP agent for: please write NOTES-web.md");
    expect(diff).toContain('(new file)');
    // demo-acp offers Allow, Allow all edits (allow_always) and Deny: no "Deny always"
    expect(await request.getByTestId('acp-allow-always').count()).toBe(1);
    expect(await request.getByTestId('acp-deny-always').count()).toBe(0);
    expect(await page.getByTestId('acp-panel').getAttribute('data-turn-running')).toBe('true');
    expect(await fileExists('NOTES-web.md'), 'nothing is written before the answer').toBe(false);
    await screenshot(page, 'acp-permission');

    await request.getByTestId('acp-allow').click();
    await request.waitFor({ state: 'detached', timeout: 10_000 });
    await expect.poll(transcript, { timeout: 30_000 }).toContain('Turn 1 ended: end turn');
    const text = await transcript();
    expect(text).toContain('please write NOTES-web.md');
    expect(text).toContain('Permission asked: Write NOTES-web.md — Allow, by a person');
    expect(await page.getByTestId('acp-transcript').getByTestId('acp-tool').getAttribute('data-status')).toBe('completed');
    expect(await page.getByTestId('acp-panel').getAttribute('data-turn-running')).toBe('false');
    const cat = await dash.cli(['exec', sessionId, '--', 'cat', 'NOTES-web.md']);
    expect(cat.stdout).toContain("Written by Berth's demo ACP agent for: please write NOTES-web.md");

    expect(await page.getByTestId('acp-usage-turns').textContent()).toBe('1');
    expect(await page.getByTestId('acp-usage-tools').textContent()).toBe('1');
    expect(await page.getByTestId('acp-usage-tokens').textContent()).toMatch(/^in \d+ · out 42 · total \d+$/);
    expect(await page.getByTestId('acp-usage-context').textContent()).toMatch(/ \/ 200,000$/);
    expect(await page.getByTestId('acp-usage-cost').count(), 'demo-acp reports no cost').toBe(0);
    await screenshot(page, 'acp-turn-ended');
  });

  it('sends a turn from the page; the list marks the session waiting; Deny leaves the file untouched', async () => {
    launched();
    await page.getByTestId('acp-prompt').fill('now write DENIED.md');
    await page.getByTestId('acp-send').click();
    const request = page.getByTestId('acp-permission');
    await request.waitFor({ timeout: 30_000 });
    expect(await request.getByTestId('acp-tool-title').textContent()).toBe('Write DENIED.md');

    await page.goto(`${dash.origin}/`);
    const row = page.locator(`[data-testid="session-row"][data-session-id="${sessionId}"]`);
    await expect.poll(() => row.getByTestId('session-waiting').textContent(), { timeout: 10_000 }).toBe('waiting for approval');
    await screenshot(page, 'acp-sessions-waiting');

    await row.locator('a').first().click();
    await page.getByTestId('acp-permission').getByTestId('acp-deny').click();
    await page.getByTestId('acp-permission').waitFor({ state: 'detached', timeout: 10_000 });
    await expect.poll(transcript, { timeout: 30_000 }).toContain('Turn 2 ended: end turn');
    expect(await transcript()).toContain('Permission asked: Write DENIED.md — Deny, by a person');
    expect(await page.locator('[data-testid="acp-tool"][data-tool-id="call-2"]').getAttribute('data-status')).toBe('failed');
    expect(await fileExists('DENIED.md')).toBe(false);
    expect(await page.getByTestId('acp-usage-turns').textContent()).toBe('2');
  });

  it('takes the badge off the list once a request is answered elsewhere (the list polls running ACP sessions)', async () => {
    launched();
    await page.goto(`${dash.origin}/`);
    const badge = page.locator(`[data-testid="session-row"][data-session-id="${sessionId}"]`).getByTestId('session-waiting');
    expect(await badge.count()).toBe(0);
    expect((await dash.cli(['send', sessionId, 'write LATER.md'])).code).toBe(0);
    await badge.waitFor({ timeout: 15_000 });
    expect((await dash.cli(['approve', sessionId])).code).toBe(0);
    await badge.waitFor({ state: 'detached', timeout: 15_000 });
    await expect.poll(() => fileExists('LATER.md'), { timeout: 15_000 }).toBe(true);
  });

  it('cancels a slow turn from the page', async () => {
    launched();
    await openSession();
    await expect.poll(transcript, { timeout: 30_000 }).toContain('Turn 3 ended');
    await page.getByTestId('acp-prompt').fill('a slow one');
    await page.getByTestId('acp-send').click();
    await page.getByTestId('acp-cancel').click({ timeout: 15_000 });
    await expect.poll(transcript, { timeout: 30_000 }).toContain('Turn 4 ended: cancelled');
    await page.getByTestId('acp-cancel').waitFor({ state: 'detached', timeout: 10_000 });
    expect(await page.getByTestId('acp-send').isDisabled(), 'the prompt is empty').toBe(true);
  });

  it('stop and resume from the page: the restored conversation shows, it continued, the usage counts the first run', async () => {
    const launch = await dash.cli(['launch', '--repo', dash.repo, '--agent', 'demo-acp', '--prompt', 'please write KEPT.md', '--env', 'BERTH_DEMO_STEP_MS=0']);
    expect(launch.code, launch.stderr).toBe(0);
    const id = /Session (\S+) is ready/.exec(launch.stdout)?.[1] ?? '';
    expect(id, launch.stdout).not.toBe('');
    await page.goto(`${dash.origin}/sessions/${encodeURIComponent(id)}`);
    const panel = page.getByTestId('acp-panel');
    await panel.getByTestId('acp-permission').getByTestId('acp-allow').click({ timeout: 30_000 });
    await expect.poll(transcript, { timeout: 30_000 }).toContain('Turn 1 ended: end turn');
    expect(await page.getByTestId('acp-usage-tools').textContent()).toBe('1');
    const tokensBefore = await page.getByTestId('acp-usage-tokens').textContent();

    await page.getByTestId('action-stop').click();
    await page.locator('[data-testid="session-page"][data-state="stopped"]').waitFor({ timeout: 30_000 });
    await page.getByTestId('action-resume').click();
    await page.locator('[data-testid="session-page"][data-state="ready"]').waitFor({ timeout: 60_000 });

    const resumeLine = page.getByTestId('acp-resume');
    await resumeLine.waitFor({ timeout: 30_000 });
    expect(await resumeLine.textContent()).toMatch(/^Conversation of agent-\d+ continued/);
    expect(await resumeLine.getAttribute('data-loaded')).toBe('true');
    expect(await page.getByTestId('acp-history').textContent()).toBe('Earlier conversation (restored by the agent)');
    const replayed = page.locator('[data-testid="acp-transcript"] [data-replay="true"]');
    const history = (await replayed.allTextContents()).join('\n');
    expect(history).toContain('please write KEPT.md');
    expect(history).toContain('Looked at: please write KEPT.md');
    // the launch prompt is not run again: nothing of this run is waiting or running
    expect(await page.getByTestId('acp-permission').count()).toBe(0);
    expect(await page.getByTestId('acp-usage-turns').textContent()).toBe('0');
    expect(await page.getByTestId('acp-usage-earlier-turns').textContent()).toBe('1');
    // the first run's tool call and tokens are still counted
    expect(await page.getByTestId('acp-usage-tools').textContent()).toBe('1');
    expect(await page.getByTestId('acp-usage-tokens').textContent()).toBe(tokensBefore);
    await screenshot(page, 'acp-resumed');

    await page.getByTestId('acp-prompt').fill('what did I ask first?');
    await page.getByTestId('acp-send').click();
    await expect.poll(transcript, { timeout: 30_000 }).toContain('Turn 1 ended: end turn');
    expect(await transcript()).toContain('This conversation had 1 earlier turn(s); the first was: please write KEPT.md');
    expect(await page.getByTestId('acp-usage-tools').textContent(), 'no tool call this turn').toBe('1');
  });
});
