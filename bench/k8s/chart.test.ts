import { describe, expect, it } from 'vitest';
import { byhandSteps, launchChartData, renderLaunchChart, tickStep, type ChartData } from './chart.js';

const launch = {
  at: '2026-12-01T09:51:00.000Z',
  setup: { n: 3 },
  machine: { berth_commit: 'abc1234' },
  samples: {
    'launch.total': [900, 1000, 1100],
    'launch.storage': [10, 20, 30],
    'launch.pod_ready': [500, 600, 700],
    'launch.bootstrap': [100, 100, 100],
    'launch.agentctl_connect': [50, 60, 70],
    'launch.agent_start': [5, 5, 5],
    'floor.api.pvc': [950, 960, 970],
    'floor.real.pvc': [550, 560, 570],
  },
};

describe('launchChartData', () => {
  it('takes the p50 of every stage in launch order, the total and both PVC floors', () => {
    const d = launchChartData(launch);
    expect(d.berth.steps).toEqual([
      { label: 'storage', ms: 20 },
      { label: 'pod_ready', ms: 600 },
      { label: 'bootstrap', ms: 100 },
      { label: 'agentctl_connect', ms: 60 },
      { label: 'agent_start', ms: 5 },
    ]);
    expect(d.berth.totalMs).toBe(1000);
    expect(d.floors).toEqual({ apiMs: 960, realMs: 560 });
    expect(d.caption).toContain('N = 3');
    expect(d.caption).toContain('abc1234');
  });

  it('survives a file without samples', () => {
    const d = launchChartData({});
    expect(d.berth.steps).toEqual([]);
    expect(d.floors).toEqual({});
  });
});

describe('byhandSteps', () => {
  it('reads step.* samples in file order, with the total apart and counters left out', () => {
    const w = byhandSteps({ samples: { 'step.apply': [100, 300], 'step.wait_ready': [1000], total: [1500], health_attempts: [1], delete: [200] } });
    expect(w?.steps).toEqual([
      { label: 'apply', ms: 100 },
      { label: 'wait_ready', ms: 1000 },
    ]);
    expect(w?.totalMs).toBe(1500);
  });

  it('reads summary rows, a steps map or a steps list', () => {
    expect(byhandSteps({ rows: [{ figure: 'step.cp', p50: 170 }, { figure: 'total', p50: 400 }] })?.steps).toEqual([{ label: 'cp', ms: 170 }]);
    expect(byhandSteps({ steps: { apply: { p50: 10 }, exec: 20 } })?.steps).toEqual([
      { label: 'apply', ms: 10 },
      { label: 'exec', ms: 20 },
    ]);
    expect(byhandSteps({ steps: [{ name: 'apply', p50_ms: 7 }] })?.steps).toEqual([{ label: 'apply', ms: 7 }]);
  });

  it('gives nothing for a file it cannot read', () => {
    expect(byhandSteps(null)).toBeUndefined();
    expect(byhandSteps({ samples: {} })).toBeUndefined();
    expect(byhandSteps({ steps: 'x' })).toBeUndefined();
  });
});

describe('tickStep', () => {
  it('gives round steps', () => {
    expect(tickStep(1000)).toBe(200);
    expect(tickStep(4761)).toBe(1000);
    expect(tickStep(80)).toBe(10);
  });
});

describe('renderLaunchChart', () => {
  const data: ChartData = { ...launchChartData(launch), byhand: { title: 'By hand <kubectl>', steps: [{ label: 'apply', ms: 700 }], totalMs: 750 } };
  const svg = renderLaunchChart(data);

  it('is one self-contained SVG document', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).not.toMatch(/@import|@font-face|<script|href=|url\(/);
  });

  it('draws one bar per step, laid end to end, and both floors as lines', () => {
    const bars = [...svg.matchAll(/<rect x="([\d.]+)" y="\d+" width="([\d.]+)" height="16"/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
    expect(bars).toHaveLength(6); // 5 stages + 1 by-hand step
    for (let i = 1; i < 5; i++) expect(bars[i]![0]).toBeCloseTo(bars[i - 1]![0] + bars[i - 1]![1], 0);
    expect(svg).toContain('API-visible floor (PVC) 960 ms');
    expect(svg).toContain('real floor (PVC) 560 ms');
    expect(svg.match(/stroke-dasharray/g)).toHaveLength(2);
  });

  it('escapes labels', () => {
    expect(svg).toContain('By hand &lt;kubectl&gt;');
    expect(svg).not.toContain('<kubectl>');
  });

  it('says so when there is no baseline', () => {
    const only = renderLaunchChart({ ...launchChartData(launch), byhandNote: 'no baseline yet' });
    expect(only).toContain('no baseline yet');
  });
});
