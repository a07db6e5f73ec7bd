/**
 * `berth dashboard [--open]`: asks the running `berth serve` for a one-time login code and prints
 * the dashboard URL carrying it in the fragment (never sent to a server, so never in a log). With
 * `--open`, xdg-open gets a private file that redirects to that URL, never the URL itself.
 * @module
 */
import { spawn } from 'node:child_process';
import { write } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import type { CliContext, ParsedCommand } from '../types.js';
import { writeLoginPage } from './dashboard-page.js';

/** The login URL for a server base URL and a code (pure). */
export function dashboardUrl(baseUrl: string, code: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/#code=${encodeURIComponent(code)}`;
}

/**
 * Opens `path` with xdg-open; resolves false when there is none (or it fails to start). Only a
 * file path goes on its command line: another user can read a command line, not the file.
 */
function openInBrowser(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('xdg-open', [path], { stdio: 'ignore', detached: true });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const client = ctx.client();
  const { code } = await client.createDashboardCode();
  const url = dashboardUrl(client.baseUrl, code);
  await write(ctx.io.stdout, `${url}\n(valid for 5 minutes, once; run berth dashboard again for another browser or tab)\n`);
  if (cmd.values.open !== true) return ExitCode.ok;
  let page: string;
  try {
    page = writeLoginPage(ctx.dataDir, url, ctx.now());
  } catch (err) {
    await write(ctx.io.stderr, `could not write the login page for xdg-open (${(err as Error).message}): open the link above in your browser\n`);
    return ExitCode.ok;
  }
  if (!(await openInBrowser(page))) await write(ctx.io.stderr, 'could not run xdg-open: open the link above in your browser\n');
  return ExitCode.ok;
}
