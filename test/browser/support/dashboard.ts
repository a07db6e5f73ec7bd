/**
 * Harness of the dashboard's browser tests: a real `berth serve` (the built CLI, local executor,
 * a temp data dir and repository) and Debian's Chromium driven headless by playwright-core.
 * Nothing here downloads a browser: the executable is /usr/bin/chromium (override with
 * BERTH_TEST_CHROMIUM). Screenshots go to artifacts/screenshots/ for a reviewer to look at.
 * @module
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CLI, ROOT, ensureBuilt, makeRepo, runCli, startServeProcess, stopProcess, tempDir, type CliResult } from '../../integration/cli/helpers.js';

export const CHROMIUM = process.env.BERTH_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const SHOTS = join(ROOT, 'artifacts', 'screenshots');

/** Flags that keep Chromium off the network (this machine's network is closed) and quiet. */
const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
];

/**
 * An agent that edits a tracked file (so the diff viewer has a change), prints coloured output,
 * then echoes its stdin; `demo` (built in) stays available too.
 */
const EDITOR_AGENT = [
  'set -e',
  'printf "\\033[32mgreen start\\033[0m %s\\n" "$BERTH_PROMPT"',
  'echo "edited by the agent" >> README.md',
  'echo "agent> edited README.md"',
  'while IFS= read -r line; do echo "agent> you said: $line"; done',
].join('\n');

export interface Dashboard {
  dataDir: string;
  repo: string;
  port: number;
  origin: string;
  serve: ChildProcess;
  /** Everything `berth serve` printed (stdout + stderr): the tests check no secret reached it. */
  output(): string;
  /** Runs the CLI against this server's data dir. */
  cli(args: string[]): Promise<CliResult>;
  /** A fresh one-time login URL from `berth dashboard`. */
  loginUrl(): Promise<string>;
  stop(): Promise<void>;
}

/** Starts `berth serve` on a fresh data dir with a config naming an `editor` agent. */
export async function startDashboard(): Promise<Dashboard> {
  ensureBuilt();
  if (!existsSync(join(ROOT, 'dist', 'web', 'index.html'))) throw new Error('dist/web/index.html is missing: run npm run build');
  const base = tempDir('berth-browser-');
  const dataDir = join(base, 'data');
  const repo = join(base, 'repo');
  mkdirSync(dataDir, { recursive: true });
  makeRepo(repo, 'browser demo');
  execFileSync('git', ['branch', 'base'], { cwd: repo });
  writeFileSync(
    join(dataDir, 'berth.yaml'),
    [
      'agents:',
      '  editor:',
      '    description: edits README.md and echoes its input',
      `    command: ["sh", "-c", ${JSON.stringify(EDITOR_AGENT)}]`,
      '  demo-fast:',
      '    command: ["{{agentctl}}", "demo-agent"]',
      '    env: { BERTH_DEMO_STEP_MS: "0" }',
      'defaults:',
      '  agent: editor',
      '',
    ].join('\n'),
  );
  const { child, port, output } = await startServeProcess(dataDir, [], { BERTH_LOG_LEVEL: 'info' });
  const origin = `http://127.0.0.1:${port}`;
  const cli = (args: string[]): Promise<CliResult> => runCli(args, { dataDir });
  return {
    dataDir,
    repo,
    port,
    origin,
    serve: child,
    output,
    cli,
    async loginUrl() {
      const r = await cli(['dashboard']);
      const m = /(http:\/\/\S+#code=[A-Za-z0-9_-]+)/.exec(r.stdout);
      if (r.code !== 0 || !m?.[1]) throw new Error(`berth dashboard failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
      return m[1];
    },
    async stop() {
      // Local workspaces and agentctl processes outlive serve: remove every session first.
      const ls = await cli(['ls', '-o', 'json']).catch(() => null);
      const sessions = ls?.code === 0 ? (JSON.parse(ls.stdout) as { id: string }[] | { sessions: { id: string }[] }) : [];
      for (const s of Array.isArray(sessions) ? sessions : sessions.sessions) await cli(['rm', '--force', s.id]);
      await stopProcess(child);
      rmSync(base, { recursive: true, force: true });
    },
  };
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (test/cluster/install-deps.sh does)`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

/** A browser context that records every URL the page requested (the tests check none carries the token). */
export async function newContext(browser: Browser, viewport = { width: 1280, height: 860 }): Promise<{ context: BrowserContext; page: Page; urls: string[] }> {
  const context = await browser.newContext({ viewport });
  const urls: string[] = [];
  context.on('request', (r) => urls.push(r.url()));
  context.on('websocket' as never, (ws: { url(): string }) => urls.push(ws.url()));
  const page = await context.newPage();
  page.on('websocket', (ws) => urls.push(ws.url()));
  return { context, page, urls };
}

/** Opens a login URL and waits for the sessions list (the code exchanged, the fragment gone). */
export async function logIn(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByTestId('sessions-list').or(page.getByTestId('sessions-empty')).first().waitFor();
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

export { CLI, ROOT };
