import { describe, expect, it } from 'vitest';
import { RPC_HEADING, rpcRows, rpcSection, type RpcResult } from './rpc-report.js';

const samples = {
  'forwarded.health': [3, 4, 5],
  'inpod.health': [1, 1, 2],
  'forwarded.file.4KiB': [6],
  'inpod.file.4KiB': [2],
  'forwarded.file.1MiB': [60],
  'inpod.file.1MiB': [30],
  'forwarded.exec': [40],
  'inpod.exec': [50],
};

describe('rpcRows', () => {
  it('pairs both paths per figure with ratios and the p50 difference', () => {
    const [health, , , exec] = rpcRows(samples);
    expect(health).toMatchObject({ figure: 'health', n: 3, forwarded: { p50: 4, p99: 5 }, inPod: { p50: 1, p99: 2 }, ratio: { p50: 4, p99: 2.5 }, diffP50: 3 });
    expect(exec?.ratio.p50).toBeCloseTo(0.8);
  });

  it('gives NaN, not a throw, for a figure without samples', () => {
    expect(Number.isNaN(rpcRows({})[0]!.ratio.p50)).toBe(true);
  });
});

describe('rpcSection', () => {
  const r: RpcResult = {
    at: '2026-12-01T15:00:00.000Z',
    machine: { node: 'v20', platform: 'linux', cpu: 'cpu', cpus: 2, memory_gib: 8, kubernetes: 'v1.34.4', client_node: '1.4.0', pod_node: 'v20', pod_qos_class: 'BestEffort', loadavg_at_start: [1, 2, 3], loadavg_at_end: [1, 2, 3] },
    berth_commit: 'abc1234',
    setup: { reps: { health: 3, files: 1, exec: 1 }, rounds: 1, warmup: { health: 1, files: 1, exec: 1 }, profile: 'p' },
    samples,
  };
  const md = rpcSection(r);

  it('has the heading, one table row per figure and the /health target', () => {
    expect(md.startsWith(`${RPC_HEADING}\n`)).toBe(true);
    expect(md).toContain('| `GET /health` | 3 | 4.00 | 5.00 | 1.00 | 2.00 | 4.0× | 2.5× | 3.00 |');
    expect(md).toMatch(/≤ 3× in the Pod at p50: 4\.0×, \*\*missed\*\*/);
  });

  it('explains an in-Pod figure slower than the forwarded one', () => {
    expect(md).toContain('`exec true` took longer in the Pod');
  });
});
