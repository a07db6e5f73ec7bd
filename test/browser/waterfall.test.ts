/**
 * The stage waterfall with a Kubernetes launch's reasons, from a fixture session service behind the
 * real API server and the built web app: the waits (volume binding, the scheduler's refusal, the
 * image pull) render under their stage, live, then a failed bootstrap with its reason.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeHandle } from '../../src/server/serve.js';
import { ROOT, runCli } from '../integration/cli/helpers.js';
import { launchBrowser, logIn, newContext, screenshot } from './support/dashboard.js';
import { KubeFixture } from './support/kube-fixture.js';

describe('stage waterfall with Kubernetes reasons (fixture events)', () => {
  let browser: Browser;
  let handle: ServeHandle;
  let fixture: KubeFixture;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'berth-waterfall-'));
    fixture = new KubeFixture();
    handle = await startServe({
      dataDir,
      port: 0,
      version: 'test',
      webRoot: join(ROOT, 'dist', 'web'),
      launchOptions: { agents: ['demo'], targets: [{ name: 'k8s-small', type: 'kubernetes', kind: 'profile', capabilities: { repositoryOptional: true, removes: "the session's Pod and its PVC (the workspace volume, with every file in it)" } }], defaults: { agent: 'demo', executor: 'k8s-small' } },
      createService: async () => fixture,
    });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await handle?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('shows each wait with its reason under its stage, follows the launch live, and the failure', async () => {
    const { page } = await newContext(browser);
    const login = await runCli(['dashboard'], { dataDir });
    const url = /(http:\/\/\S+#code=[A-Za-z0-9_-]+)/.exec(login.stdout)?.[1];
    expect(url, login.stderr).toBeDefined();
    await logIn(page, url ?? '');

    // The list shows the current stage and its live reason.
    const row = page.locator('[data-testid="session-row"][data-session-id="kube-fixture-1"]');
    await expect.poll(() => row.getByTestId('session-stage').textContent()).toMatch(/pod_ready/);
    expect(await row.getByTestId('session-stage').textContent()).toMatch(/ErrImagePull/);

    await row.locator('a').first().click();
    await page.getByTestId('stage-waterfall').waitFor();
    const pod = page.locator('[data-testid="stage-bar"][data-stage="pod_ready"]');
    expect(await pod.getAttribute('data-status')).toBe('waiting');
    const waits = await page.getByTestId('stage-wait').allTextContents();
    expect(waits.join('\n')).toContain('WaitForFirstConsumer');
    expect(waits.join('\n')).toContain('FailedScheduling');
    expect(waits.join('\n')).toContain('0/1 nodes are available: 1 Insufficient cpu.');
    expect(waits.join('\n')).toContain('Pulling image "registry.example/agent:1"');
    expect(await page.getByTestId('session-page').textContent()).toContain('no such host');
    await screenshot(page, 'waterfall-waiting');

    fixture.podReady();
    await page.locator('[data-testid="stage-bar"][data-stage="bootstrap"][data-status="running"]').waitFor();
    expect(await pod.getAttribute('data-status')).toBe('succeeded');
    expect((await page.getByTestId('stage-wait').allTextContents()).join('\n')).toContain('Successfully pulled image');

    fixture.bootstrapFails();
    await page.locator('[data-testid="session-page"][data-state="failed"]').waitFor();
    const boot = page.locator('[data-testid="stage-bar"][data-stage="bootstrap"]');
    expect(await boot.getAttribute('data-status')).toBe('failed');
    const text = (await page.getByTestId('session-page').textContent()) ?? '';
    expect(text).toContain('PrepareFailed');
    expect(text).toContain('setup_script exited with code 7');
    await screenshot(page, 'waterfall-failed');

    // Narrow window: still readable, nothing cut off sideways.
    await page.setViewportSize({ width: 420, height: 900 });
    const overflow = await page.evaluate(() => {
      const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
      return d.scrollWidth - d.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(1);
    await screenshot(page, 'waterfall-narrow');
  });
});
