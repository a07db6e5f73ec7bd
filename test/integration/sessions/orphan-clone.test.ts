/**
 * A controller killed with SIGKILL in the middle of a clone must not leave `git` running (re-parented
 * to PID 1, with the repository password in its environment): the next controller's recovery kills
 * it before it reports the launch undone. The git server is a local TCP listener that accepts and
 * never answers, so the clone hangs until someone kills it.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../../src/controller/index.js';
import { agentctlBundle, ROOT, startController, teardownController, tempDir, until } from './helpers.js';

const PASSWORD = 'hanging-clone-password-5d1e';

/** Live (non-zombie) processes whose command line or environment mentions `needle`. */
function processesMentioning(needle: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'latin1');
      const env = readFileSync(`/proc/${name}/environ`, 'latin1');
      if (cmd.includes(needle) || env.includes(needle)) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

describe('kill -9 of the controller during a clone from a hanging git server', () => {
  let work: string;
  let dataDir: string;
  let server: Server;
  let port: number;
  const sockets = new Set<Socket>();
  let child: ChildProcess | undefined;
  let c: Controller | undefined;

  beforeAll(async () => {
    work = tempDir('orphan-clone');
    dataDir = join(work, 'data');
    server = createServer((s) => {
      // accept and never answer
      sockets.add(s);
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    child?.kill('SIGKILL');
    for (const pid of processesMentioning(`127.0.0.1:${port}`)) process.kill(pid, 'SIGKILL');
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
    await teardownController(c, dataDir, work);
  });

  it('leaves no git process after the restart, and the session failed with a message', async () => {
    const url = `http://berth:${PASSWORD}@127.0.0.1:${port}/repo.git`;
    const agentctl = agentctlBundle(work);
    child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/integration/sessions/fixtures/clone-child.ts')], {
      cwd: ROOT,
      env: { ...process.env, CHILD_DATA_DIR: dataDir, CHILD_AGENTCTL: agentctl, CHILD_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    const id = await until(() => /session (s-[0-9a-f]+)/.exec(stdout)?.[1], 'the child to start the launch', 30_000);
    // the clone is running and hangs on the silent server
    await until(() => (sockets.size > 0 ? true : undefined), 'git to connect to the hanging server', 30_000);
    const clones = processesMentioning(`127.0.0.1:${port}`);
    expect(clones.length, 'git is cloning').toBeGreaterThan(0);

    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    expect(processesMentioning(`127.0.0.1:${port}`).length, 'the clone outlives the killed controller (the premise)').toBeGreaterThan(0);

    c = await startController(dataDir, agentctl);
    expect(processesMentioning(`127.0.0.1:${port}`), 'recovery killed the clone before reporting').toEqual([]);
    expect(processesMentioning(PASSWORD), 'no process holds the repository password').toEqual([]);
    const view = await c.get(id);
    expect(view.state).toBe('failed');
    expect(view.error?.message).toMatch(/interrupted by a controller restart.*everything it created was removed/);
  }, 90_000);
});
