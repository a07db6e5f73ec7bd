/**
 * agentctl benchmark: round-trip latency (p50/p99) of control /health and instance file reads,
 * process start → first output byte, and the daemon's RSS idle and with 10 running processes.
 * Runs the built bundle as a child process; writes bench/results/agentctl.json and prints a table.
 * No assertions: this measures, it does not judge.
 * @module
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { AgentctlProcess, cleanup, createInstance, ROOT, tempDir, until, type InstanceApi } from '../test/integration/support/agentctl.js';

interface LatencyResult {
  name: string;
  iterations: number;
  p50_ms: number;
  p99_ms: number;
  mean_ms: number;
}

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

async function measure(name: string, iterations: number, warmup: number, fn: () => Promise<void>): Promise<LatencyResult> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    await fn();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  const round = (n: number): number => Math.round(n * 1000) / 1000;
  return {
    name,
    iterations,
    p50_ms: round(percentile(samples, 50)),
    p99_ms: round(percentile(samples, 99)),
    mean_ms: round(samples.reduce((a, b) => a + b, 0) / samples.length),
  };
}

function rssKiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : NaN;
}

async function expectOk(res: Response): Promise<void> {
  if (!res.ok) throw new Error(`${res.url}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

/** POST a process, then wait on its stream for the first output chunk. */
async function startToFirstByte(api: InstanceApi): Promise<void> {
  const res = await api.request<{ id: string }>('POST', '/api/v1/processes', { body: { command: ['printf', 'x'] } });
  if (res.status !== 201) throw new Error(`start failed: ${res.status}`);
  await new Promise<void>((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${api.port}/api/v1/processes/${res.body.id}/stream?from=0`, {
      headers: { authorization: `Bearer ${api.token}`, 'x-instance-id': api.id },
    });
    ws.on('message', (data: Buffer) => {
      if ((JSON.parse(data.toString('utf8')) as { type: string }).type === 'output') {
        ws.terminate();
        resolve();
      }
    });
    ws.on('error', reject);
  });
}

async function main(): Promise<void> {
  const workspace = tempDir('agentctl-bench-');
  writeFileSync(join(workspace, 'small.bin'), Buffer.alloc(4 * 1024, 7));
  writeFileSync(join(workspace, 'large.bin'), Buffer.alloc(1024 * 1024, 7));
  const agentctl = await AgentctlProcess.start({ env: { AGENTCTL_LOG_LEVEL: 'warn', AGENTCTL_MAX_OUTPUT_BYTES: String(64 * 1024) } });
  try {
    const token = await agentctl.handshake();
    const api = await createInstance(agentctl, token, 'bench', workspace);
    const instanceHeaders = { authorization: `Bearer ${token}`, 'x-instance-id': api.id };
    await new Promise((r) => setTimeout(r, 500));
    const idleRss = rssKiB(agentctl.pid);

    const sleepers: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await api.request<{ id: string }>('POST', '/api/v1/processes', { body: { command: ['sleep', '1000'] } });
      sleepers.push(res.body.id);
    }
    await new Promise((r) => setTimeout(r, 500));
    // Measured before the latency runs, so request garbage does not count as process overhead.
    const busyRss = rssKiB(agentctl.pid);
    for (const id of sleepers) await api.request('POST', `/api/v1/processes/${id}/signal`, { body: { signal: 'SIGKILL' } });
    await until(async () => {
      const list = await api.request<{ processes: Array<{ status: string }> }>('GET', '/api/v1/processes');
      return list.body.processes.every((p) => p.status === 'exited');
    });

    const latencies: LatencyResult[] = [];
    latencies.push(await measure('control GET /health', 2000, 200, async () => expectOk(await fetch(`${agentctl.url}/health`))));
    latencies.push(
      await measure('instance file read 4 KiB', 1000, 100, async () =>
        expectOk(await fetch(`${api.url}/api/v1/files/content?path=small.bin`, { headers: instanceHeaders })),
      ),
    );
    latencies.push(
      await measure('instance file read 1 MiB', 200, 20, async () =>
        expectOk(await fetch(`${api.url}/api/v1/files/content?path=large.bin`, { headers: instanceHeaders })),
      ),
    );
    latencies.push(await measure('process start -> first output byte', 100, 10, () => startToFirstByte(api)));

    const result = {
      at: new Date().toISOString(),
      node: process.version,
      latencies,
      rss_kib: { idle: idleRss, with_10_running_processes: busyRss },
    };
    const dir = join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'agentctl.json'), `${JSON.stringify(result, null, 2)}\n`);
    console.table(latencies.map((l) => ({ benchmark: l.name, n: l.iterations, 'p50 ms': l.p50_ms, 'p99 ms': l.p99_ms, 'mean ms': l.mean_ms })));
    console.table([
      { state: 'idle (1 instance)', 'RSS MiB': Math.round((idleRss / 1024) * 10) / 10 },
      { state: '10 running processes', 'RSS MiB': Math.round((busyRss / 1024) * 10) / 10 },
    ]);
    console.log('wrote bench/results/agentctl.json');
  } finally {
    await agentctl.stop('SIGTERM');
    await cleanup(workspace);
  }
}

await main();
