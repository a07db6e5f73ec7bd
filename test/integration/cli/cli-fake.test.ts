/**
 * The real built CLI against an in-process API server over the fake session service: the
 * output and exit-code contract of commands whose controller behaviour is hard to provoke for
 * real (a failing launch stage, a waiting stage).
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServeHandle } from '../../../src/server/serve.js';
import type { FakeSessions } from '../../support/fake-sessions.js';
import { ensureBuilt, runCli, startFakeServe, tempDir } from './helpers.js';

describe('berth CLI output and exit codes (fake controller)', () => {
  let dataDir: string;
  let handle: ServeHandle;
  let fake: FakeSessions;

  beforeAll(async () => {
    ensureBuilt();
    dataDir = tempDir('berth-cli-fake-');
    ({ handle, fake } = await startFakeServe(dataDir, { agentLines: 3, agentTickMs: 5, waitForWatcher: true }));
  });

  afterAll(async () => {
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('shows each stage, the waiting reason, and how to get in', async () => {
    const r = await runCli(['launch', '--repo', 'https://example.com/app.git', '--branch', 'dev'], { dataDir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Launching session s\d+ \(agent demo, executor local\)$/m);
    expect(r.stdout).toMatch(/… agentctl_start\s+waiting: Starting: waiting for agentctl to listen/);
    expect(r.stdout).toMatch(/✓ agent_start\s+\d+ms/);
    expect(r.stdout).toMatch(/get in:\s+berth shell s\d+/);
    expect(fake.calls.at(-1)).toMatchObject({ method: 'launch' });
  });

  it('exits 1 when the launch fails, naming the stage, the message and a next step', async () => {
    const r = await runCli(['launch', '--repo', '.', '--agent', 'fail'], { dataDir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ agent_start\s+\d+ms\s+AgentExited: the agent exited with code 1/);
    expect(r.stderr).toMatch(/launch of session s\d+ failed at stage agent_start: .*exited with code 1/);
    expect(r.stderr).toMatch(/next: berth status s\d+ \(details\), berth resume s\d+ \(retry\), berth rm s\d+/);
  });

  it('prints only the id with --detach, and the final view on stdout with -o json', async () => {
    const detached = await runCli(['launch', '--repo', '.', '--detach'], { dataDir });
    expect(detached.code).toBe(0);
    expect(detached.stdout).toMatch(/^s\d+\n$/);
    const json = await runCli(['launch', '--repo', '.', '-o', 'json'], { dataDir });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ state: 'ready', stages: expect.any(Array) });
    expect(json.stderr).toContain('is ready');
  });

  it('streams logs -f until the agent exits', async () => {
    const launch = await runCli(['launch', '--repo', '.'], { dataDir });
    const id = /Session (\S+) is ready/.exec(launch.stdout)?.[1] ?? 'missing';
    const r = await runCli(['logs', '-f', id], { dataDir });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('demo agent: step 1\ndemo agent: step 2\ndemo agent: step 3\n');
    const tail = await runCli(['logs', '--from', '2', id], { dataDir });
    expect(tail.stdout).toBe('demo agent: step 3\n');
  });

  it('lists sessions as yaml and json', async () => {
    const yaml = await runCli(['ls', '-o', 'yaml'], { dataDir });
    expect(yaml.stdout).toMatch(/^sessions:\n {2}- id: s\d+/);
    const json = JSON.parse((await runCli(['ls', '-o', 'json'], { dataDir })).stdout) as { sessions: unknown[] };
    expect(json.sessions.length).toBeGreaterThan(0);
  });

  it('exits 2 for usage errors without calling the server', async () => {
    const before = fake.calls.length;
    const r = await runCli(['exec', 's0001', 'ls'], { dataDir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('hint: see: berth exec --help');
    expect(fake.calls.length).toBe(before);
  });

  it('prints the OpenAPI document without a server', async () => {
    const none = tempDir('berth-none-');
    const r = await runCli(['openapi'], { dataDir: none });
    rmSync(none, { recursive: true, force: true });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { openapi: string }).openapi).toBe('3.1.0');
  });
});
