/**
 * agentctl started through its loader from the V8 code cache the build writes: the cache is used
 * when it belongs to the bundle beside it, ignored when the bundle changed (even to one of the same
 * length, which V8 alone would accept), made for another Node, or cut short — and agentctl serves
 * alike in every case. The local executor starts agentctl this way only when loader and cache are there.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeCachePath, LOADER_FILE } from '../../../src/agentctl/code-cache.js';
import { agentctlStartCommand } from '../../../src/executors/local/agentctl-process.js';
import { AgentctlProcess, BUNDLE, cleanup, createInstance, ensureBuilt, ROOT, tempDir, until } from '../support/agentctl.js';

const dir = tempDir('agentctl-cache-');
const bundle = join(dir, 'agentctl.cjs');
const loader = join(dir, LOADER_FILE);
const cache = codeCachePath(bundle);

/** Writes the cache as the build does; no stderr: the session's first requests (handshake, instance, agent) ran and are in it. */
function writeCache(): void {
  const r = spawnSync(process.execPath, [loader, '--write-code-cache', bundle], { encoding: 'utf8', timeout: 30_000 });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
}

/** Starts agentctl through the loader, returning it and what the loader said about the cache. */
async function startThroughLoader(): Promise<{ agentctl: AgentctlProcess; cacheState: string | undefined }> {
  const agentctl = await AgentctlProcess.start({ command: [process.execPath, loader, bundle], env: { AGENTCTL_CODE_CACHE_REPORT: '1' } });
  return { agentctl, cacheState: /agentctl-loader: code cache (\w+)/.exec(agentctl.stderr)?.[1] };
}

/** A handshake, an instance and a process in it: the bundle really runs, whatever the cache. */
async function expectServes(agentctl: AgentctlProcess, id: string): Promise<void> {
  const token = await agentctl.handshake();
  const api = await createInstance(agentctl, token, id, tempDir('agentctl-cache-ws-'));
  const started = await api.request<{ id: string }>('POST', '/api/v1/processes', { body: { command: ['sh', '-c', 'exit 7'] } });
  expect(started.status).toBe(201);
  await until(async () => (await api.request<{ status: string }>('GET', `/api/v1/processes/${started.body.id}`)).body.status === 'exited');
  expect((await api.request<{ exit_code: number }>('GET', `/api/v1/processes/${started.body.id}`)).body.exit_code).toBe(7);
  expect(await agentctl.stop('SIGTERM')).toBe(0);
}

beforeAll(async () => {
  await ensureBuilt();
  copyFileSync(BUNDLE, bundle);
  copyFileSync(join(ROOT, 'dist', LOADER_FILE), loader);
}, 120_000);

afterAll(() => cleanup(dir));

describe('agentctl code cache', () => {
  it('is written by the build beside dist/agentctl.cjs, for this bundle and this Node', () => {
    const built = readFileSync(codeCachePath(BUNDLE));
    const header = built.subarray(0, built.indexOf(0x0a)).toString('utf8');
    expect(header).toMatch(new RegExp(`^berth-v8cache 1 [0-9a-f]{64} ${process.version.replace(/\./g, '\\.')}$`));
    expect(built.length).toBeGreaterThan(100_000);
  });

  it('starts agentctl from a cache of its own bundle', async () => {
    writeCache();
    const { agentctl, cacheState } = await startThroughLoader();
    expect(cacheState).toBe('used');
    await expectServes(agentctl, 'cc-used');
  });

  it('takes the bundle by a relative path too (as a person runs it by hand)', () => {
    writeCache();
    const r = spawnSync(process.execPath, [LOADER_FILE, 'agentctl.cjs', '--version'], { cwd: dir, encoding: 'utf8', timeout: 30_000, env: { ...process.env, AGENTCTL_CODE_CACHE_REPORT: '1' } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(r.stderr).toBe('agentctl-loader: code cache used\n');
  });

  it('ignores the cache once the bundle changed, even to a bundle of the same length', async () => {
    writeCache();
    const original = readFileSync(bundle);
    const changed = Buffer.from(original);
    changed[changed.length - 1] = 0x20; // the closing newline, now a space: same length, other bytes
    writeFileSync(bundle, changed);
    try {
      const { agentctl, cacheState } = await startThroughLoader();
      expect(cacheState).toBe('none');
      await expectServes(agentctl, 'cc-changed');
    } finally {
      writeFileSync(bundle, original);
    }
  });

  it("ignores a cache made for another Node, and one V8 cannot use (cut short)", async () => {
    writeCache();
    const good = readFileSync(cache);
    const newline = good.indexOf(0x0a);
    const header = good.subarray(0, newline).toString('utf8');
    writeFileSync(cache, Buffer.concat([Buffer.from(header.replace(/ v[\d.]+$/, ' v18.20.8')), good.subarray(newline)]));
    const other = await startThroughLoader();
    expect(other.cacheState).toBe('none');
    await expectServes(other.agentctl, 'cc-other-node');

    writeFileSync(cache, good.subarray(0, newline + 1 + Math.floor((good.length - newline) / 2)));
    const cut = await startThroughLoader();
    expect(cut.cacheState).toBe('rejected');
    await expectServes(cut.agentctl, 'cc-cut');
  });

  it('is how the local executor starts agentctl, only when the loader and a cache lie beside the bundle', () => {
    writeCache();
    expect(agentctlStartCommand(bundle)).toEqual([process.execPath, loader, bundle]);
    const bare = tempDir('agentctl-cache-bare-');
    copyFileSync(BUNDLE, join(bare, 'agentctl.cjs'));
    expect(agentctlStartCommand(join(bare, 'agentctl.cjs'))).toEqual([process.execPath, join(bare, 'agentctl.cjs')]);
    expect(existsSync(join(bare, LOADER_FILE))).toBe(false);
    void cleanup(bare);
  });
});
