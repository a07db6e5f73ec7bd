import { describe, expect, it } from 'vitest';
import { POOL_HEADING, poolSection, poolTargets, stageRows, type PoolResult } from './pool-report.js';

const samples: Record<string, number[]> = {
  'warm.total': [80, 90, 100, 400],
  'warm.pool_claim': [20, 30, 40, 50],
  'warm.bootstrap': [Number.NaN, Number.NaN, Number.NaN, Number.NaN],
  'warm.span.stages_wall': [50, 60, 70, 80],
  'warm.span.call_to_first_stage': [5, 6, 7, 8],
  'warm_repo.total': [200, 210],
  'burst.total': [150, 170, 190, 300],
  'drained.total': [1100],
  'cold.total': [1000],
  'floor.api.pvc': [900],
  'resume.total': [1300],
};

describe('poolTargets', () => {
  const rows = poolTargets(samples);

  it('compares each figure with its target, as ms and as ratios', () => {
    expect(rows.map((r) => r.met)).toEqual([true, false, false, true, false, false]);
    expect(rows[0]!.measured).toBe('90 ms (400 ms)');
    expect(rows[2]!.measured).toBe('3.33× (170 ms, 300 ms)');
    expect(rows[3]!.measured).toBe('1.10× (1100 ms, 1000 ms)');
    expect(rows[4]!.measured).toBe('1.11× (1000 ms, 900 ms)');
    expect(rows[5]!.target).toBe('≤ floor + 300 ms = 1200 ms');
  });

  it('says "no data", not met or missed, for a figure without samples', () => {
    expect(poolTargets({}).every((r) => r.met === null)).toBe(true);
  });
});

describe('stageRows', () => {
  it('gives the p50 of each stage and span, – for one the launch has not, and the total', () => {
    const [warm] = stageRows(samples);
    expect(warm).toEqual(['warm, no repository', '4', '30', '–', '–', '–', '–', '–', '60', '6', '–', '90', '400']);
  });

  it('takes a stage recorded as null (NaN through JSON) as absent', () => {
    const viaJson = JSON.parse(JSON.stringify({ 'cold.total': [100], 'cold.pod_ready': [60], 'cold.bootstrap': [Number.NaN] })) as Record<string, number[]>;
    expect(stageRows(viaJson)[0]!.slice(2, 8)).toEqual(['–', '–', '60', '–', '–', '–']);
  });
});

describe('poolSection', () => {
  const r: PoolResult = {
    at: '2026-12-04T01:00:00.000Z',
    machine: { node: 'v20', platform: 'linux', cpu: 'cpu', cpus: 2, memory_gib: 8, kubernetes: 'v1.34.4', client_node: '1.4.0', loadavg_at_start: [1, 2, 3], loadavg_at_end: [1, 2, 3] },
    berth_commit: 'abc1234',
    setup: { n: 4, burst: 4, warm_pool_size: 4, drained_pool_size: 1, suspend_after: '2s', profile: 'p', agent: 'a' },
    surprises: [{ figure: 'warm', session: 's-1', detail: 'cold; the pool is empty' }],
    samples,
    summary: [],
  };
  const md = poolSection(r);

  it('has the heading, a row per target with its verdict, and names the launch that was not warm', () => {
    expect(md.startsWith(`${POOL_HEADING}\n`)).toBe(true);
    expect(md).toContain('| warm launch, no repository → ready, p50 (p95) | 90 ms (400 ms) | ≤ 100 ms | met |');
    expect(md).toContain('| ≤ 150 ms | **missed** |');
    expect(md).toContain('warm s-1 (cold; the pool is empty)');
  });

  it("states the machine's CPU around the warm launches and the burst, and what it bounds", () => {
    const cpu = poolSection({ ...r, samples: { ...samples, 'warm.machine_cpu_ms': [70, 80, 90], 'burst.machine_cpu_ms': [900], 'burst.wall_ms': [600] } });
    expect(cpu).toContain('spent 80 ms of CPU during a single warm launch');
    expect(cpu).toContain('and 900 ms during the burst, whose 600 ms of wall time on 2 CPUs it kept 75 % busy');
    expect(cpu).toContain('450 ms at the least on 2 CPUs');
    expect(md, 'no CPU line without its samples').not.toContain('**CPU.**');
  });
});
