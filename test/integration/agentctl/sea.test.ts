// The self-contained SEA binary (npm run build:sea) is the agentctl shipped into images without
// Node: it must be the same daemon as the bundle, not just print a version.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentctlProcess, BUNDLE, cleanup, createInstance, ensureBuilt, ROOT, tempDir, until } from '../support/agentctl.js';

const SEA = join(ROOT, 'dist/agentctl-sea');
const workspace = tempDir('agentctl-sea-');

beforeAll(async () => {
  await ensureBuilt();
  // Rebuild when missing or older than the bundle it embeds.
  if (!existsSync(SEA) || statSync(SEA).mtimeMs < statSync(BUNDLE).mtimeMs) {
    const res = spawnSync(process.execPath, [join(ROOT, 'scripts/build-sea.mjs')], { cwd: ROOT, encoding: 'utf8', timeout: 240_000 });
    if (res.status !== 0) throw new Error(`npm run build:sea failed (${res.status}): ${res.stderr.slice(-2000)}`);
  }
}, 300_000);

afterAll(() => cleanup(workspace));

describe('agentctl SEA binary', () => {
  it('prints the package version without a Node installation on PATH', () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const res = spawnSync(SEA, ['--version'], { encoding: 'utf8', env: { PATH: '/nonexistent' } });
    expect(res.status).toBe(0);
    expect(res.stdout.trim()).toBe(version);
    expect(res.stderr).not.toContain('ExperimentalWarning');
  });

  it('serves the handshake, an instance and a process like the bundle', async () => {
    const agentctl = await AgentctlProcess.start({ command: [SEA] });
    const token = await agentctl.handshake();
    const api = await createInstance(agentctl, token, 'sea', workspace);
    const started = await api.request<{ id: string }>('POST', '/api/v1/processes', { body: { command: ['sh', '-c', 'echo from-sea; exit 5'] } });
    expect(started.status).toBe(201);
    const id = started.body.id;
    await until(async () => (await api.request<{ status: string }>('GET', `/api/v1/processes/${id}`)).body.status === 'exited');
    const info = await api.request<{ exit_code: number }>('GET', `/api/v1/processes/${id}`);
    expect(info.body.exit_code).toBe(5);
    const page = await api.request<{ chunks: { data: string }[] }>('GET', `/api/v1/processes/${id}/output?from=0`);
    expect(page.body.chunks.map((c) => Buffer.from(c.data, 'base64').toString('utf8')).join('')).toBe('from-sea\n');
    await agentctl.stop('SIGTERM');
  });
});
