/**
 * The PTY wrapper's state dirs: a wrapper that was SIGKILLed leaves its dir behind; the next shell
 * removes it, and never the dir of a wrapper that still runs or of another user.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { shellCommand } from '../../../src/controller/shell.js';

describe('berth shell state dirs', () => {
  let parent: string;
  afterEach(() => rmSync(parent, { recursive: true, force: true }));

  function runShell(dir: string): void {
    const [cmd, ...args] = shellCommand(dir, 24, 80, ['true']);
    const r = spawnSync(cmd as string, args, { encoding: 'utf8', input: '', timeout: 20_000 });
    expect(r.status, r.stderr).toBe(0);
  }

  it('removes the dirs of killed wrappers on the next shell, keeps live ones and its own is gone after exit', () => {
    parent = mkdtempSync(join(tmpdir(), 'berth-shell-parent-'));
    const dead = join(parent, 'berth-shell-dead');
    mkdirSync(dead, { mode: 0o700 });
    writeFileSync(join(dead, 'pid'), '2147483646\n');
    writeFileSync(join(dead, 'tty'), '/dev/pts/99\n');
    const live = join(parent, 'berth-shell-live');
    mkdirSync(live, { mode: 0o700 });
    writeFileSync(join(live, 'pid'), `${process.pid}\n`);
    const starting = join(parent, 'berth-shell-starting'); // created, pid not written yet
    mkdirSync(starting, { mode: 0o700 });

    const mine = join(parent, 'berth-shell-new');
    runShell(mine);

    expect(existsSync(dead), 'a killed wrapper’s dir').toBe(false);
    expect(existsSync(live), 'a running wrapper’s dir').toBe(true);
    expect(existsSync(starting), 'a dir whose wrapper has not recorded its pid yet').toBe(true);
    expect(existsSync(mine), 'its own dir, after the shell exited').toBe(false);
  });
});
