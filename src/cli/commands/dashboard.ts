/**
 * `berth dashboard [--open]`: asks the running `berth serve` for a one-time login code and prints
 * the dashboard URL carrying it in the fragment (never sent to a server, so never in a log).
 * @module
 */
import { spawn } from 'node:child_process';
import { write, type CliContext } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import type { ParsedCommand } from '../registry.js';

/** The login URL for a server base URL and a code (pure). */
export function dashboardUrl(baseUrl: string, code: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/#code=${encodeURIComponent(code)}`;
}

/** Opens `url` with xdg-open; resolves false when there is none (or it fails to start). */
function openInBrowser(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('xdg-open', [url], { stdio: 'ignore', detached: true });
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
  await write(ctx.io.stdout, `${url}\n(valid for 5 minutes, once; run berth dashboard again for another browser)\n`);
  if (cmd.values.open === true && !(await openInBrowser(url))) {
    await write(ctx.io.stderr, 'could not run xdg-open: open the link above in your browser\n');
  }
  return ExitCode.ok;
}
