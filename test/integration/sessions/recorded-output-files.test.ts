/**
 * `berth logs` of a stopped local session reads the agent's recorded output from its agentctl state
 * dir, which the agent can write (issue 18, item 3). A real `berth serve`: the agent's output file
 * replaced with a FIFO, a link to /dev/zero or a 2 GB sparse file must neither freeze serve (a
 * synchronous open of a FIFO never returns) nor exhaust it: the FIFO and the link are refused with
 * an error naming the file, the sparse file is read only up to a cap, and /health answers while
 * each logs call is in flight.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, startServeProcess, stopProcess, type CliResult } from '../cli/helpers.js';
import { cleanup, killLeftovers, makeRepo, tempDir, until } from './helpers.js';

/** Peak resident memory of a process (VmHWM), in bytes. */
function peakRss(pid: number): number {
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

describe('recorded output files an agent replaced', () => {
  let work: string;
  let dataDir: string;
  let serve: ChildProcess | undefined;
  let base: string;
  let token: string;
  let id: string;
  let outputFile: string;

  beforeAll(async () => {
    ensureBuilt();
    work = tempDir('recorded-files');
    dataDir = join(work, 'data');
    const repo = makeRepo(work, 'repo', 'recorded');
    const started = await startServeProcess(dataDir);
    serve = started.child;
    base = `http://127.0.0.1:${started.port}`;
    token = readFileSync(join(dataDir, 'state', 'api-token'), 'utf8').trim();
    const launch = await runCli(['launch', '--repo', repo, '--env', 'BERTH_DEMO_STEP_MS=0', '-d'], { dataDir });
    expect(launch.code, launch.stderr).toBe(0);
    id = launch.stdout.trim();
    await until(async () => ((await runCli(['logs', id], { dataDir })).stdout.includes('agent> ready for instructions') ? true : undefined), 'the demo agent to finish');
    expect((await runCli(['stop', id], { dataDir })).code).toBe(0);
    // <workspaces>/<id>/agentctl-state/<instance>/processes/agent-1/output.jsonl
    const state = join(dataDir, 'workspaces', id, 'agentctl-state');
    const instance = readdirSync(state).find((d) => existsSync(join(state, d, 'processes', 'agent-1')));
    expect(instance, 'the agent run is recorded in the state dir').toBeDefined();
    outputFile = join(state, instance!, 'processes', 'agent-1', 'output.jsonl');
    expect(existsSync(outputFile)).toBe(true);
  }, 60_000);

  afterAll(async () => {
    await runCli(['rm', '--force', id], { dataDir });
    await stopProcess(serve);
    const leaked = killLeftovers(dataDir);
    cleanup(work);
    expect(leaked).toBe(0);
  });

  /** Runs `berth logs ID`; while it is in flight, serve must answer /health. */
  async function logsWhileHealthy(): Promise<CliResult> {
    const logs = runCli(['logs', id], { dataDir });
    const health = await fetch(`${base}/health`, { signal: AbortSignal.timeout(10_000) }).catch((err: unknown) => err);
    expect(health instanceof Response ? health.status : String(health), 'serve answers /health while the logs call is in flight').toBe(200);
    return logs;
  }

  function replaceOutput(make: (file: string) => void): void {
    rmSync(outputFile, { force: true });
    make(outputFile);
  }

  it('serves the recorded output of the stopped session (the file as agentctl left it)', async () => {
    const r = await runCli(['logs', id], { dataDir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('agent> ready for instructions');
  });

  it('refuses an output file replaced with a FIFO, naming it, without blocking serve', async () => {
    replaceOutput((file) => execFileSync('mkfifo', [file]));
    const r = await logsWhileHealthy();
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${outputFile} is not a regular file (a FIFO); not read`);
    // the API says the same on the logs stream
    const res = await fetch(`${base}/api/v1/sessions/${id}/logs`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) });
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { type: string; error?: { message: string } });
    expect(lines.find((l) => l.type === 'error')?.error?.message).toContain(`${outputFile} is not a regular file (a FIFO); not read`);
  });

  it('refuses an output file replaced with a link to /dev/zero, naming it, without reading it', async () => {
    replaceOutput((file) => symlinkSync('/dev/zero', file));
    const r = await logsWhileHealthy();
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${outputFile} is a symbolic link; not read`);
  });

  it('reads only a bounded tail of a 2 GB sparse output file', async () => {
    replaceOutput((file) => {
      execFileSync('touch', [file]);
      truncateSync(file, 2_000_000_000);
    });
    const r = await logsWhileHealthy();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout, 'zeros hold no output lines').toBe('');
    expect(peakRss(serve!.pid!), "serve's peak memory stays far below the file's size").toBeLessThan(512 * 1024 * 1024);
  });
});
