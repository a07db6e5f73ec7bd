/**
 * The launch chart of issue 11 (docs/bench-launch.svg): one Berth launch's stage waterfall — the
 * p50 of each stage from bench/results/k8s-launch.json as consecutive bars on a millisecond axis —
 * with the API-visible and the real kubelet floor (with a PVC, p50) as vertical lines, and, when
 * bench/results/k8s-byhand.json exists, the by-hand baseline's steps as a second waterfall below.
 * `launchChartData` and `byhandSteps` read the result files' shapes defensively, `renderLaunchChart`
 * turns the data into a self-contained SVG string (no external fonts, styles or scripts); all three
 * are pure. `writeLaunchChart` is the file I/O around them.
 * @module
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pct } from './stats.js';

export interface Bar {
  label: string;
  ms: number;
}

export interface Waterfall {
  title: string;
  steps: Bar[];
  /** The measured end-to-end p50 (not the sum of the step p50s), when known. */
  totalMs?: number;
}

export interface ChartData {
  /** Subtitle: run date, N, commit. */
  caption: string;
  berth: Waterfall;
  floors: { apiMs?: number; realMs?: number };
  byhand?: Waterfall;
  /** Shown instead of the by-hand waterfall when there is none. */
  byhandNote?: string;
}

const LAUNCH_STAGES = ['storage', 'pod_ready', 'bootstrap', 'agentctl_connect', 'agent_start'] as const;

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const p50Of = (v: unknown): number | undefined => {
  if (Array.isArray(v)) {
    const xs = v.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
    return xs.length ? pct(xs, 50) : undefined;
  }
  if (isObj(v)) return num(v.p50) ?? num(v.p50_ms) ?? num(v.median);
  return num(v);
};

/** The Berth waterfall and the floors from bench/results/k8s-launch.json (its `samples`). */
export function launchChartData(launch: unknown): Pick<ChartData, 'caption' | 'berth' | 'floors'> {
  const r = isObj(launch) ? launch : {};
  const s = isObj(r.samples) ? r.samples : {};
  const setup = isObj(r.setup) ? r.setup : {};
  const machine = isObj(r.machine) ? r.machine : {};
  const steps = LAUNCH_STAGES.flatMap((st) => {
    const ms = p50Of(s[`launch.${st}`]);
    return ms === undefined ? [] : [{ label: st, ms }];
  });
  const totalMs = p50Of(s['launch.total']);
  const apiMs = p50Of(s['floor.api.pvc']);
  const realMs = p50Of(s['floor.real.pvc']);
  const caption = [
    typeof r.at === 'string' ? `run of ${r.at.slice(0, 16).replace('T', ' ')} UTC` : undefined,
    setup.n !== undefined ? `N = ${String(setup.n)} sequential launches` : undefined,
    typeof machine.berth_commit === 'string' ? `Berth ${machine.berth_commit}` : undefined,
    'p50 of every stage',
  ]
    .filter((x) => x !== undefined)
    .join(' · ');
  return {
    caption,
    berth: { title: 'Berth: launch → ready (managed PVC, git clone)', steps, ...(totalMs !== undefined ? { totalMs } : {}) },
    floors: { ...(apiMs !== undefined ? { apiMs } : {}), ...(realMs !== undefined ? { realMs } : {}) },
  };
}

/**
 * The by-hand baseline's per-step p50s from bench/results/k8s-byhand.json, whatever its exact
 * shape: a `steps` list or map, else `samples` / `rows` entries named `step.<name>` (or, without
 * such names, every entry but the totals and counters); `total` is the measured total. Undefined
 * when no step is found.
 */
export function byhandSteps(byhand: unknown): Waterfall | undefined {
  if (!isObj(byhand)) return undefined;
  let entries: [string, number | undefined][] = [];
  if (Array.isArray(byhand.steps)) {
    entries = byhand.steps.filter(isObj).map((x) => [String(x.name ?? x.step ?? x.figure ?? x.label ?? '?'), p50Of(x)]);
  } else if (isObj(byhand.steps)) {
    entries = Object.entries(byhand.steps).map(([k, v]) => [k, p50Of(v)]);
  } else if (isObj(byhand.samples) || isObj(byhand.samples_ms)) {
    const s = (isObj(byhand.samples) ? byhand.samples : byhand.samples_ms) as Json;
    entries = Object.entries(s).map(([k, v]) => [k, p50Of(v)]);
  } else if (Array.isArray(byhand.rows) || Array.isArray(byhand.summary)) {
    const rows = ((Array.isArray(byhand.rows) ? byhand.rows : byhand.summary) as unknown[]).filter(isObj);
    entries = rows.map((x) => [String(x.figure ?? x.name ?? x.step ?? '?'), p50Of(x)]);
  }
  const found = entries.filter((e): e is [string, number] => e[1] !== undefined && e[1] >= 0);
  const isTotal = (k: string): boolean => /(^|\.)total(_ms)?$/i.test(k);
  const totalMs = num(byhand.total_ms) ?? found.find(([k]) => isTotal(k))?.[1];
  const prefixed = found.filter(([k]) => /^steps?\./.test(k));
  const chosen = prefixed.length ? prefixed.map(([k, v]) => [k.replace(/^steps?\./, ''), v] as const) : found.filter(([k]) => !isTotal(k) && !/attempt|count|version|delete|warmup/i.test(k));
  if (chosen.length === 0) return undefined;
  const when = typeof byhand.at === 'string' ? ` (run of ${byhand.at.slice(0, 16).replace('T', ' ')} UTC)` : '';
  return { title: `By hand with kubectl: apply → first /health${when}`, steps: chosen.map(([label, ms]) => ({ label, ms })), ...(totalMs !== undefined ? { totalMs } : {}) };
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fmtMs = (v: number): string => `${Math.round(v)} ms`;

/** A tick step giving 4–10 ticks up to `max`. */
export function tickStep(max: number): number {
  const raw = max / 8;
  const mag = 10 ** Math.floor(Math.log10(Math.max(raw, 1e-9)));
  return ([1, 2, 2.5, 5, 10].map((m) => m * mag).find((st) => st >= raw) ?? 10 * mag);
}

const COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f', '#bab0ac'];
const W = 980;
const LEFT = 230;
const RIGHT = 70;
const ROW = 26;
const BAR = 16;

/** The chart as a self-contained SVG document. */
export function renderLaunchChart(d: ChartData): string {
  const sum = (w: Waterfall | undefined): number => (w ? w.steps.reduce((a, b) => a + b.ms, 0) : 0);
  const maxMs = Math.max(1, sum(d.berth), sum(d.byhand), d.berth.totalMs ?? 0, d.byhand?.totalMs ?? 0, d.floors.apiMs ?? 0, d.floors.realMs ?? 0);
  const step = tickStep(maxMs);
  const axisMax = Math.ceil(maxMs / step) * step;
  const plotW = W - LEFT - RIGHT;
  const x = (ms: number): number => LEFT + (ms / axisMax) * plotW;
  const out: string[] = [];
  let y = 92;
  const groupTop = y;

  const waterfall = (w: Waterfall, colorOffset: number): void => {
    out.push(`<text x="12" y="${y + 14}" class="h">${esc(w.title)}</text>`);
    y += ROW;
    let at = 0;
    w.steps.forEach((s, i) => {
      const x0 = x(at);
      const width = Math.max(1, x(at + s.ms) - x0);
      out.push(
        `<text x="${LEFT - 8}" y="${y + 12}" text-anchor="end">${esc(s.label)}</text>`,
        `<rect x="${x0.toFixed(1)}" y="${y}" width="${width.toFixed(1)}" height="${BAR}" fill="${COLORS[(i + colorOffset) % COLORS.length]!}"><title>${esc(s.label)}: ${fmtMs(s.ms)} (p50), from ${fmtMs(at)}</title></rect>`,
        `<text x="${(x0 + width + 4).toFixed(1)}" y="${y + 12}" class="v">${fmtMs(s.ms)}</text>`,
      );
      at += s.ms;
      y += ROW;
    });
    if (w.totalMs !== undefined) {
      out.push(
        `<text x="${LEFT - 8}" y="${y + 12}" text-anchor="end" class="b">total (measured p50)</text>`,
        `<rect x="${LEFT}" y="${y + 3}" width="${Math.max(1, x(w.totalMs) - LEFT).toFixed(1)}" height="${BAR - 6}" fill="#555"/>`,
        `<text x="${(x(w.totalMs) + 4).toFixed(1)}" y="${y + 12}" class="v b">${fmtMs(w.totalMs)}</text>`,
      );
      y += ROW;
    }
    out.push(`<text x="${LEFT - 8}" y="${y + 4}" text-anchor="end" class="n">sum of step p50s ${fmtMs(sum(w))}</text>`);
    y += ROW;
  };

  waterfall(d.berth, 0);
  if (d.byhand) waterfall(d.byhand, 5);
  else if (d.byhandNote) {
    out.push(`<text x="12" y="${y + 14}" class="n">${esc(d.byhandNote)}</text>`);
    y += ROW;
  }
  const plotBottom = y;

  // grid and axis first (drawn under the bars), then the floor lines over them
  const grid: string[] = [];
  for (let t = 0; t <= axisMax + 1e-9; t += step) {
    grid.push(`<line x1="${x(t).toFixed(1)}" y1="${groupTop}" x2="${x(t).toFixed(1)}" y2="${plotBottom}" class="g"/>`, `<text x="${x(t).toFixed(1)}" y="${plotBottom + 16}" text-anchor="middle" class="v">${Math.round(t)}</text>`);
  }
  grid.push(`<line x1="${LEFT}" y1="${plotBottom}" x2="${W - RIGHT}" y2="${plotBottom}" stroke="#333"/>`, `<text x="${(LEFT + plotW / 2).toFixed(1)}" y="${plotBottom + 34}" text-anchor="middle">milliseconds from the launch call</text>`);
  const floors: string[] = [];
  const floorLabels: string[] = [];
  const floorLine = (ms: number | undefined, label: string, color: string, row: number): void => {
    if (ms === undefined) return;
    const fx = x(ms).toFixed(1);
    const anchor = x(ms) > W - RIGHT - 110 ? 'end' : x(ms) < LEFT + 110 ? 'start' : 'middle';
    floors.push(
      `<line x1="${fx}" y1="${groupTop - 4 - row * 14}" x2="${fx}" y2="${plotBottom}" stroke="${color}" stroke-width="2" stroke-dasharray="6 3"><title>${esc(label)}: ${fmtMs(ms)} (p50)</title></line>`,
    );
    floorLabels.push(`<text x="${fx}" y="${groupTop - 8 - row * 14}" text-anchor="${anchor}" style="fill:${color}" class="b">${esc(label)} ${fmtMs(ms)}</text>`);
  };
  floorLine(d.floors.realMs, 'real floor (PVC)', '#c0392b', 0);
  floorLine(d.floors.apiMs, 'API-visible floor (PVC)', '#8e44ad', 1);

  const notes = [
    'Bars: the p50 of each step, laid end to end (the sum of the step p50s is not the p50 of the total, shown in grey).',
    'Dashed: the kubelet floors for a sleeping Pod of the same image with a PVC (p50, same run as the launch).',
  ];
  const height = plotBottom + 82;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" role="img" aria-label="Launch stage waterfall">`,
    '<style>text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;font-size:12px;fill:#222}.t{font-size:16px;font-weight:600}.h{font-size:13px;font-weight:600}.v{fill:#444}.b{font-weight:600}.n{fill:#666;font-style:italic}.g{stroke:#e4e4e4}</style>',
    `<rect width="${W}" height="${height}" fill="#fff"/>`,
    '<text x="12" y="22" class="t">Launch → ready on the test cluster: stage waterfall next to the kubelet floors</text>',
    `<text x="12" y="40" class="n">${esc(d.caption)}</text>`,
    ...grid,
    ...floors,
    ...out,
    ...floorLabels,
    ...notes.map((n, i) => `<text x="12" y="${plotBottom + 56 + i * 16}" class="n">${esc(n)}</text>`),
    '</svg>',
    '',
  ].join('\n');
}

/** Reads the result files under `root`/bench/results and writes `root`/docs/bench-launch.svg; returns its path. */
export function writeLaunchChart(root: string): string {
  const read = (f: string): unknown => JSON.parse(readFileSync(join(root, 'bench', 'results', f), 'utf8'));
  if (!existsSync(join(root, 'bench', 'results', 'k8s-launch.json'))) throw new Error('bench/results/k8s-launch.json is missing: run npm run bench:k8s first');
  const data: ChartData = launchChartData(read('k8s-launch.json'));
  let byhand: Waterfall | undefined;
  if (existsSync(join(root, 'bench', 'results', 'k8s-byhand.json'))) {
    try {
      byhand = byhandSteps(read('k8s-byhand.json'));
    } catch {
      byhand = undefined;
    }
  }
  if (byhand) data.byhand = byhand;
  else data.byhandNote = 'By-hand baseline: no usable bench/results/k8s-byhand.json (npm run bench:byhand)';
  const file = join(root, 'docs', 'bench-launch.svg');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, renderLaunchChart(data));
  return file;
}
