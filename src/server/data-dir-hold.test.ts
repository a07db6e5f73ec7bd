import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { holdDataDir } from './data-dir-hold.js';

describe('holdDataDir (the kernel lock a controller holds on its data dir while it runs)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('lets a second holder in only once the first lets go, saying once that it waits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-hold-'));
    dirs.push(dir);
    const first = await holdDataDir(dir);
    let waits = 0;
    let held = false;
    const second = holdDataDir(dir, { onWait: () => waits++ }).then((release) => {
      held = true;
      return release;
    });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(held, 'not while the first holds it').toBe(false);
    expect(waits).toBe(1);
    first();
    const release = await second;
    expect(held).toBe(true);
    release();
  });

  it('gives up waiting when its signal aborts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-hold-'));
    dirs.push(dir);
    const first = await holdDataDir(dir);
    const controller = new AbortController();
    const waiting = holdDataDir(dir, { signal: controller.signal, onWait: () => controller.abort(new Error('serve is stopping')) });
    await expect(waiting).rejects.toThrow('serve is stopping');
    first();
  });
});
