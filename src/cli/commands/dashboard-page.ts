/**
 * The page `berth dashboard --open` hands to xdg-open instead of the login URL: a command line is
 * world-readable (`/proc/PID/cmdline` of xdg-open and of the browser it starts), a file in a 0700
 * directory is not. The page redirects the browser to the URL with the code at once; the file is
 * removed a minute later (and any left behind, at the next run).
 * @module
 */
import { spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureStateDir } from '../../shared/layout.js';

/** Directories of login pages in `<dataDir>/state/` start with this. */
export const PAGE_DIR_PREFIX = 'dashboard-open-';
/** How long a login page stays on disk (the browser reads it at once). */
export const PAGE_TTL_MS = 60_000;

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** A page that sends the browser on to `url` (script first, so the file leaves no history entry; meta refresh without script). */
export function loginPageHtml(url: string): string {
  const attr = escapeHtml(url);
  const js = JSON.stringify(url).replace(/</g, '\\u003c');
  return [
    '<!doctype html>',
    '<meta charset="utf-8">',
    '<meta name="referrer" content="no-referrer">',
    `<meta http-equiv="refresh" content="0;url=${attr}">`,
    '<title>Berth dashboard</title>',
    `<script>location.replace(${js});</script>`,
    `<p><a href="${attr}">Open the Berth dashboard</a></p>`,
    '',
  ].join('\n');
}

/**
 * Writes the login page for `url` into a new 0700 directory under `<dataDir>/state/` (the file
 * 0600) and schedules its removal (`opts.removeLater`, by default a detached `sleep; rm`); returns
 * the file's path. Pages older than PAGE_TTL_MS left by earlier runs are removed first.
 */
export function writeLoginPage(dataDir: string, url: string, now: Date, opts: { removeLater?: (dir: string) => void } = {}): string {
  const state = ensureStateDir(dataDir);
  sweepLoginPages(state, now.getTime());
  const dir = mkdtempSync(join(state, PAGE_DIR_PREFIX)); // mode 0700
  const file = join(dir, 'login.html');
  writeFileSync(file, loginPageHtml(url), { mode: 0o600, flag: 'wx' });
  (opts.removeLater ?? removeLater)(dir);
  return file;
}

/** Removes login page directories in `stateDir` older than PAGE_TTL_MS. */
export function sweepLoginPages(stateDir: string, nowMs: number): void {
  for (const name of readdirSync(stateDir)) {
    if (!name.startsWith(PAGE_DIR_PREFIX)) continue;
    const path = join(stateDir, name);
    try {
      const st = lstatSync(path);
      if (st.isDirectory() && nowMs - st.mtimeMs >= PAGE_TTL_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // Gone meanwhile (another run's removal).
    }
  }
}

/** A detached `sleep; rm` outlives this short command; its command line holds the path only. */
function removeLater(dir: string): void {
  try {
    const child = spawn('sh', ['-c', `sleep ${PAGE_TTL_MS / 1000}; rm -rf -- "$1"`, 'berth-dashboard-cleanup', dir], { stdio: 'ignore', detached: true });
    child.once('error', () => undefined); // then the next run's sweep removes it
    child.unref();
  } catch {
    // As above.
  }
}
