/**
 * The symlink race of `PUT …/files/content` (issue 7, item 3): a process inside the workspace
 * swaps a directory for a symlink to an outside directory in a loop while thousands of writes go
 * through that directory. Not one file may appear outside.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentctlProcess, cleanup, createInstance, tempDir, type InstanceApi } from '../support/agentctl.js';

const ws = tempDir();
const outside = tempDir('agentctl-outside-');
const stopFile = join(ws, '..', `${ws.split('/').pop() ?? 'ws'}.stop-racer`);
let api: InstanceApi;
let racer: ChildProcess | undefined;

/**
 * The racer: `race` flips between a real directory and a symlink to `outside` with two renames
 * each way. It stops by itself (stop file, or 60 s at the latest).
 */
const RACER = `
const { existsSync, lstatSync, renameSync, rmSync } = require('node:fs');
const [ws, stop] = process.argv.slice(1);
const deadline = Date.now() + 60000;
const at = (n) => ws + '/' + n;
const mv = (a, b) => { try { renameSync(at(a), at(b)); } catch {} };
const isDir = (n) => { try { return lstatSync(at(n)).isDirectory(); } catch { return false; } };
while (Date.now() < deadline && !existsSync(stop)) {
  // a write with mkdirs may recreate 'race' while it is away: drop the spare so the flipping goes on
  if (isDir('race') && isDir('race.dir')) rmSync(at('race.dir'), { recursive: true, force: true });
  mv('race', 'race.dir'); mv('race.link', 'race');
  mv('race', 'race.link'); mv('race.dir', 'race');
}
`;

beforeAll(async () => {
  mkdirSync(join(ws, 'race'));
  symlinkSync(outside, join(ws, 'race.link'));
  const agentctl = await AgentctlProcess.start();
  api = await createInstance(agentctl, await agentctl.handshake(), 'race', ws);
});
afterAll(async () => {
  writeFileSync(stopFile, '');
  racer?.kill('SIGKILL');
  await cleanup(ws, outside, stopFile);
});

function countEntries(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    n++;
    if (e.isDirectory()) n += countEntries(join(dir, e.name));
  }
  return n;
}

describe('agentctl files - symlink race', () => {
  it('writes nothing outside the workspace while a directory is swapped for a symlink in a loop', { timeout: 120_000 }, async () => {
    racer = spawn(process.execPath, ['-e', RACER, ws, stopFile], { stdio: 'ignore' });
    const total = 3000;
    const concurrency = 8;
    const deadline = Date.now() + 60_000;
    let next = 0;
    const statuses = new Map<number, number>();
    const worker = async (): Promise<void> => {
      while (next < total && Date.now() < deadline) {
        const i = next++;
        // Half of the writes create a directory below the swapped one (the mkdirs path).
        const path = i % 2 === 0 ? `race/f${i}.txt` : `race/d${i}/f.txt`;
        const res = await api.request('PUT', '/api/v1/files/content', { body: { path, content: 'pwned', mkdirs: i % 2 === 1 } });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    writeFileSync(stopFile, '');
    await new Promise<void>((resolve) => (racer?.exitCode !== null ? resolve() : racer.once('exit', () => resolve())));
    expect(statuses.get(200) ?? 0, `some writes succeed inside (statuses ${JSON.stringify([...statuses])})`).toBeGreaterThan(0);
    expect(countEntries(outside), `entries outside after ${next} writes (statuses ${JSON.stringify([...statuses])})`).toBe(0);
    expect([...statuses.keys()].filter((s) => s >= 500), 'no write fails with a 5xx').toEqual([]);
  });
});
