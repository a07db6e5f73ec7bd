import { describe, expect, it } from 'vitest';
import type { StageRecord } from '../../../src/api/index.js';
import { formatDuration, waterfallGeometry } from './waterfall.js';

const T = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (ms: number): string => new Date(T + ms).toISOString();
function stage(name: string, start: number, end: number | null, status: StageRecord['status'], waits: StageRecord['waits'] = []): StageRecord {
  return {
    name,
    status,
    startedAt: iso(start),
    endedAt: end === null ? null : iso(end),
    durationMs: end === null ? null : end - start,
    reason: null,
    message: null,
    waits,
  };
}

describe('waterfallGeometry', () => {
  it('places finished stages on one axis from the first start', () => {
    const w = waterfallGeometry([stage('workspace', 0, 2000, 'succeeded'), stage('agent_start', 2000, 4000, 'succeeded')], T + 10_000);
    expect(w.totalMs).toBe(4000);
    expect(w.bars.map((b) => [b.leftPct, b.widthPct, b.durationMs, b.live])).toEqual([
      [0, 50, 2000, false],
      [50, 50, 2000, false],
    ]);
  });

  it('grows a running stage up to now', () => {
    const stages = [stage('workspace', 0, 1000, 'succeeded'), stage('agentctl_start', 1000, null, 'waiting')];
    const early = waterfallGeometry(stages, T + 2000);
    const later = waterfallGeometry(stages, T + 5000);
    expect(early.bars[1]!.durationMs).toBe(1000);
    expect(later.bars[1]!.durationMs).toBe(4000);
    expect(later.bars[1]!.live).toBe(true);
    expect(later.bars[0]!.widthPct).toBe(20);
  });

  it('gives each wait its offset into the stage and keeps tiny stages visible', () => {
    const w = waterfallGeometry(
      [stage('workspace', 0, 10_000, 'succeeded', [{ at: iso(2500), reason: 'ErrImagePull', message: 'pulling x' }]), stage('tiny', 10_000, 10_001, 'succeeded')],
      T,
    );
    expect(w.bars[0]!.waits[0]).toMatchObject({ reason: 'ErrImagePull', offsetMs: 2500 });
    expect(w.bars[0]!.waits[0]!.leftPct).toBeCloseTo(25, 1);
    expect(w.bars[1]!.widthPct).toBeGreaterThan(0.5);
    expect(w.bars[1]!.leftPct + w.bars[1]!.widthPct).toBeLessThanOrEqual(100);
  });

  it('is empty without stages', () => {
    expect(waterfallGeometry([], T)).toEqual({ totalMs: 0, bars: [] });
  });
});

describe('formatDuration', () => {
  it('picks a readable unit', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(3240)).toBe('3.2 s');
    expect(formatDuration(65_000)).toBe('1 m 05 s');
    expect(formatDuration(7_380_000)).toBe('2 h 03 m');
  });
});
