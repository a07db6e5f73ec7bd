/**
 * Small statistics for the Kubernetes benchmark: nearest-rank percentiles and a summary row per
 * figure. Pure; every figure is computed from the recorded samples only.
 * @module
 */

export interface Row {
  figure: string;
  n: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile (`NaN` for no values). */
export function pct(values: readonly number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export function round(v: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

export function summarize(figure: string, values: readonly number[]): Row {
  return {
    figure,
    n: values.length,
    p50: round(pct(values, 50)),
    p95: round(pct(values, 95)),
    min: round(Math.min(...values)),
    max: round(Math.max(...values)),
  };
}

/** One row per figure with at least one sample, in insertion order. */
export function summarizeAll(samples: Record<string, number[]>): Row[] {
  return Object.entries(samples)
    .filter(([, v]) => v.length > 0)
    .map(([k, v]) => summarize(k, v));
}
