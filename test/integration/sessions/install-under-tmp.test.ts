/**
 * An install under /tmp (issue 18, item 9): the agentctl start command runs the loader beside the
 * bundle from its V8 code cache, and the sandbox's private /tmp hid the loader (every launch failed
 * with MODULE_NOT_FOUND). Here the built dist/ agentctl files are copied into a directory under the
 * system temp dir — copies, not symlinks, as an install there would be — and a sandboxed session is
 * launched from them with the very start command an install uses.
 * @module
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../../src/controller/index.js';
import { probeBubblewrap } from '../../../src/executors/local/index.js';
import { agentctlBundle, agentctlPids, cleanup, execText, FAST_AGENT_ENV, makeRepo, ROOT, startController, teardownController, tempDir, waitForOutput } from './helpers.js';

const FILES = ['agentctl.cjs', 'agentctl-loader.cjs', 'agentctl.cjs.v8cache'];

describe('a local executor installed under /tmp', () => {
  let work: string;
  let install: string;
  let dataDir: string;
  let c: Controller | undefined;

  beforeAll(async () => {
    expect(probeBubblewrap(), 'bubblewrap must work on the test machine').toMatchObject({ ok: true });
    work = tempDir('under-tmp');
    agentctlBundle(work); // builds dist/ when missing
    for (const f of FILES) expect(existsSync(join(ROOT, 'dist', f)), `dist/${f} is built (npm run build)`).toBe(true);
    install = mkdtempSync(join(tmpdir(), 'berth-install-'));
    for (const f of FILES) copyFileSync(join(ROOT, 'dist', f), join(install, f));
    dataDir = join(work, 'data');
    c = await startController(dataDir, join(install, 'agentctl.cjs'));
  }, 120_000);

  afterAll(async () => {
    await teardownController(c, dataDir, work);
    cleanup(install);
  });

  it('launches a sandboxed session through the loader and its code cache: ready, the agent runs, exec works', async () => {
    const id = (await c!.launch({ repository: { path: makeRepo(work, 'repo', 'under-tmp') }, env: FAST_AGENT_ENV })).id;
    const settled = await c!.waitUntilSettled(id);
    expect(settled.error ?? null, 'the launch error').toBeNull();
    expect(settled.state).toBe('ready');
    const [pid] = agentctlPids(dataDir);
    expect(pid, 'the agentctl of the session').toBeDefined();
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'), 'the start command of an install: node, the loader, the bundle').toEqual([
      process.execPath,
      join(install, 'agentctl-loader.cjs'),
      join(install, 'agentctl.cjs'),
      '',
    ]);
    // the demo agent is started with the same command ({{agentctl}} demo-agent)
    await waitForOutput(c!, id, /ready for instructions/);
    expect(await execText(c!, id, ['sh', '-c', 'echo exec-ok'])).toEqual({ exitCode: 0, stdout: 'exec-ok\n' });
  }, 60_000);
});
