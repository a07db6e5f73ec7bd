/**
 * Geometry of the stage waterfall: every stage on one time axis from the first stage's start.
 * Running stages end at `now` (the bar grows while it runs). Pure: percentages and offsets only.
 * @module
 */
import type { StageRecord } from '../../../src/api/index.js';

interface WaitGeometry {
  at: string;
  reason: string;
  message: string;
  /** ms since the stage started. */
  offsetMs: number;
  /** Position on the axis, in % of the whole width. */
  leftPct: number;
}

interface BarGeometry {
  stage: StageRecord;
  /** ms since the first stage started. */
  startMs: number;
  durationMs: number;
  live: boolean;
  leftPct: number;
  widthPct: number;
  waits: WaitGeometry[];
}

interface Waterfall {
  totalMs: number;
  bars: BarGeometry[];
}

/** Narrowest bar drawn, in % (a 3 ms stage is still visible). */
const MIN_WIDTH_PCT = 0.6;

export function waterfallGeometry(stages: readonly StageRecord[], now: number): Waterfall {
  if (stages.length === 0) return { totalMs: 0, bars: [] };
  const starts = stages.map((s) => Date.parse(s.startedAt));
  const t0 = Math.min(...starts);
  const ends = stages.map((s, i) => stageEnd(s, starts[i]!, now));
  const totalMs = Math.max(1, Math.max(...ends) - t0);
  const pct = (ms: number): number => Math.min(100, Math.max(0, (ms / totalMs) * 100));
  const bars = stages.map((stage, i) => {
    const start = starts[i]!;
    const durationMs = Math.max(0, ends[i]! - start);
    const widthPct = Math.max(MIN_WIDTH_PCT, pct(durationMs));
    return {
      stage,
      startMs: start - t0,
      durationMs,
      live: stage.endedAt === null && (stage.status === 'running' || stage.status === 'waiting'),
      leftPct: Math.min(pct(start - t0), 100 - widthPct),
      widthPct,
      waits: (stage.waits ?? []).map((w) => {
        const at = Date.parse(w.at);
        return { ...w, offsetMs: Math.max(0, at - start), leftPct: pct(at - t0) };
      }),
    };
  });
  return { totalMs, bars };
}

function stageEnd(s: StageRecord, start: number, now: number): number {
  if (s.endedAt !== null) return Date.parse(s.endedAt);
  if (s.durationMs !== null && s.status !== 'running' && s.status !== 'waiting') return start + s.durationMs;
  return Math.max(start, now);
}

/** `850 ms`, `3.2 s`, `1 m 05 s`, `2 h 03 m`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const totalS = Math.floor(ms / 1000);
  if (totalS < 3600) return `${Math.floor(totalS / 60)} m ${String(totalS % 60).padStart(2, '0')} s`;
  const m = Math.floor(totalS / 60);
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} m`;
}
