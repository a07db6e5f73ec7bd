/**
 * `berth dashboard --open` (issue 18, item 15): the built CLI against an in-process serve, with a
 * fake xdg-open first on PATH that records its command line and what the file it was given holds.
 * A command line is readable by every user (/proc/PID/cmdline): it must never carry the code.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverServer } from '../../../src/server/data-dir.js';
import type { ServeHandle } from '../../../src/server/serve.js';
import { ensureBuilt, runCli, startFakeServe, tempDir } from './helpers.js';

describe('berth dashboard --open', () => {
  let root: string;
  let dataDir: string;
  let bin: string;
  let handle: ServeHandle;
  let base: string;

  beforeAll(async () => {
    ensureBuilt();
    root = tempDir('berth-open-');
    dataDir = join(root, 'data');
    bin = join(root, 'bin');
    mkdirSync(bin);
    // Records its arguments (one per line) and a copy of the file it was asked to open.
    writeFileSync(
      join(bin, 'xdg-open'),
      ['#!/bin/sh', `out=${JSON.stringify(root)}`, 'cp "$1" "$out/opened.html"', 'printf "%s\\n" "$@" > "$out/argv.tmp"', 'mv "$out/argv.tmp" "$out/argv"', ''].join('\n'),
    );
    chmodSync(join(bin, 'xdg-open'), 0o755);
    ({ handle } = await startFakeServe(dataDir));
    const found = discoverServer(dataDir);
    if (!found) throw new Error('serve.json not written');
    base = found.baseUrl;
  });

  afterAll(async () => {
    await handle?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const login = (code: string): Promise<Response> =>
    fetch(`${base}/api/v1/dashboard/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: base }, body: JSON.stringify({ code }) });

  it('gives xdg-open a private file that redirects to the login URL, never the code itself', async () => {
    const r = await runCli(['dashboard', '--open'], { dataDir, env: { PATH: `${bin}:${process.env.PATH ?? ''}` } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const printed = /^(http:\/\/127\.0\.0\.1:\d+\/#code=([A-Za-z0-9_-]{43}))$/m.exec(r.stdout);
    const code = printed?.[2] ?? '';
    expect(code, r.stdout).not.toBe('');

    // xdg-open runs detached: wait for its record.
    await expect.poll(() => existsSync(join(root, 'argv')), { timeout: 10_000 }).toBe(true);
    const argv = readFileSync(join(root, 'argv'), 'utf8').trimEnd().split('\n');
    expect(argv).toHaveLength(1);
    const page = argv[0] ?? '';
    expect(page, 'the command line carries the code').not.toContain(code);
    expect(page.startsWith(join(dataDir, 'state'))).toBe(true);
    expect(statSync(page).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(page)).mode & 0o777).toBe(0o700);

    // The page sends the browser on to the printed URL, whose code logs in once.
    const html = readFileSync(join(root, 'opened.html'), 'utf8');
    const target = /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec(html)?.[1] ?? '';
    expect(target).toBe(printed?.[1]);
    expect(html).toContain(`location.replace(${JSON.stringify(target)})`);
    const targetCode = new URLSearchParams(new URL(target).hash.slice(1)).get('code') ?? '';
    expect((await login(targetCode)).status).toBe(200);
    expect((await login(targetCode)).status).toBe(401);
  });

  it('without xdg-open, says so and leaves the printed link to the user', async () => {
    const r = await runCli(['dashboard', '--open'], { dataDir, env: { PATH: join(root, 'empty') } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/#code=/);
    expect(r.stderr).toBe('could not run xdg-open: open the link above in your browser\n');
  });
});
