import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, makeRepo, removeSessionsAndStop, runCli, startServeProcess, tempDir } from './helpers.js';

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const LOCAL_STAGES = ['workspace', 'agentctl_start', 'agentctl_connect', 'agent_start'];
const stageCount = (stage: string): string => `berth_launch_stage_duration_seconds_count{executor="local",profile="",stage="${stage}",outcome="succeeded"}`;

describe('berth serve: probes and Prometheus metrics of a real launch', () => {
  let dataDir: string;
  let repo: string;
  let serve: ChildProcess | undefined;
  let base: string;

  beforeAll(async () => {
    ensureBuilt();
    dataDir = tempDir('berth-metrics-');
    repo = join(dataDir, 'repo');
    makeRepo(repo);
    const started = await startServeProcess(dataDir);
    serve = started.child;
    base = `http://127.0.0.1:${started.port}`;
  });

  afterAll(async () => {
    await removeSessionsAndStop(dataDir, serve);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const scrape = async (): Promise<string> => {
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text();
  };

  it('answers /healthz and /readyz without a token once it listens', async () => {
    const health = await fetch(`${base}/healthz`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await fetch(`${base}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
  });

  it('shows the stage histograms at 0 before any launch, counts a demo launch’s stages after it, and never a secret', async () => {
    const before = await scrape();
    for (const stage of LOCAL_STAGES) expect(sample(before, stageCount(stage)), stage).toBe(0);
    expect(sample(before, 'berth_sessions{state="ready"}')).toBe(0);
    expect(sample(before, 'berth_ready')).toBe(1);

    const secret = 'metrics-must-not-show-this-7f3a';
    const launch = await runCli(['launch', '--repo', repo, '--agent', 'demo', '--env', 'BERTH_DEMO_STEP_MS=0', '--env', `PROBE_SECRET=${secret}`], { dataDir });
    expect(launch.code, launch.stderr).toBe(0);
    expect(launch.stdout).toMatch(/Session \S+ is ready/);

    // The observer read the session's executor at its first event (state launching), long before
    // the launch ended: every stage event since was counted as it came, before the CLI saw `ready`.
    const after = await scrape();
    for (const stage of LOCAL_STAGES) expect(sample(after, stageCount(stage)), stage).toBe(1);
    expect(sample(after, stageCount('workspace').replace('_count{', '_sum{'))).toBeGreaterThan(0);
    expect(sample(after, 'berth_sessions{state="ready"}')).toBe(1);
    expect(sample(after, 'berth_http_request_duration_seconds_count{operation="launch",status_class="2xx"}')).toBeGreaterThanOrEqual(1);
    expect(after).toMatch(/^process_resident_memory_bytes \d+/m);

    const token = readFileSync(join(dataDir, 'state', 'api-token'), 'utf8').trim();
    expect(token.length).toBeGreaterThan(10);
    expect(after).not.toContain(token);
    expect(after).not.toContain(secret);
    expect(after).not.toContain(dataDir);
  });
});
