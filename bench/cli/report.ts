/**
 * The "CLI itself" section of BENCHMARKS.md (figure 9 of issue 11), from bench/results/cli.json.
 * `cliSection` renders it; `upsertSection` puts it in place of an earlier one (or before the
 * "What each figure means" section), leaving the rest of the file as it is. Pure but for
 * `writeCliSection`.
 * @module
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Row } from '../k8s/stats.js';

export const CLI_HEADING = '## The CLI itself — `npm run bench:cli`';

export interface CliResult {
  at: string;
  machine: { node: string; platform: string; cpus: number; cpu_model: string; mem_gib: number; loadavg_start: number[]; loadavg_end: number[] };
  berth_commit: string | null;
  setup: { runs: number; sessions: number; cli: string; compare_cli?: string };
  /** Wall time of each run (ms), per figure, in run order. */
  samples_ms: Record<string, number[]>;
  summary: Row[];
}

const fmt = (v: number): string => (Number.isFinite(v) ? String(Math.round(v)) : '-');

export function cliSection(r: CliResult): string {
  const bare = r.summary.find((row) => row.figure === 'node -e 0');
  const rows = r.summary.map((row) => {
    const over = bare && row !== bare ? `${fmt(row.p50 - bare.p50)}` : '';
    return `| ${row.figure} | ${String(row.n)} | ${fmt(row.p50)} | ${fmt(row.p95)} | ${fmt(row.min)} | ${fmt(row.max)} | ${over} |`;
  });
  const load = (l: number[]): string => l.map((v) => v.toFixed(2)).join(' / ');
  return [
    CLI_HEADING,
    '',
    `Run of ${r.at}: ${String(r.setup.runs)} runs of each command, interleaved (one of each in turn, so a load spike hits all alike), against a \`berth serve\` (local executor) with ${String(r.setup.sessions)} ready sessions; Node ${r.machine.node} on ${r.machine.platform}, ${String(r.machine.cpus)} CPUs (${r.machine.cpu_model}), load average ${load(r.machine.loadavg_start)} at start, ${load(r.machine.loadavg_end)} at the end; Berth ${r.berth_commit ?? 'unknown'}. The machine is shared with the test cluster and other work: the numbers are noisy; compare each command with \`node -e 0\` of the same run.`,
    '',
    '| command (wall time, ms) | n | p50 | p95 | min | max | p50 − `node -e 0` |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    ...(r.setup.compare_cli ? [`Rows marked [compare] ran ${r.setup.compare_cli} (another build) in the same run, interleaved with the others.`, ''] : []),
    `Each figure is the wall time of one \`node bin/berth.js …\` child process, spawn to exit, as a user runs it (\`berth ls\` prints the ${String(r.setup.sessions)}-session table; \`berth exec ID -- true\` runs \`true\` in one session's workspace through serve and agentctl). The CLI bundle is split per command (scripts/build.mjs): \`berth version\` and \`berth --help\` load no npm package, the commands that talk to serve load the API client and zod (bundled into one chunk) and \`ws\` only when they open a WebSocket; client-node, better-sqlite3 and pino load with \`serve\` and \`doctor\` only. Past Node's own start, \`berth ls\` waits mostly for serve: its list asks each session's agentctl for the agent's status (one round trip per session, in parallel), so it grows with the sessions and the machine's load; \`berth exec\` waits for the exec round trip through serve and agentctl. The API client's fetch runs on node:http (src/shared/http-fetch.ts): no command loads undici, which cost a fresh process ~100–200 ms on its first request.`,
    '',
    'Reproduce: `npm run build && npm run bench:cli` (BENCH_RUNS, default 20; BENCH_SESSIONS, default 20; BENCH_CLI=/path/to/bin/berth.js times another build, BENCH_COMPARE=/path/to/bin/berth.js times one next to this one). Every sample is in bench/results/cli.json.',
  ].join('\n');
}

/**
 * `md` with the `##` section starting with `heading` replaced by `section` (up to the next `## `
 * heading); when there is none, `section` goes before `beforeHeading` (or at the end).
 */
export function upsertSection(md: string, heading: string, section: string, beforeHeading = '## What each figure means'): string {
  const body = `${section.trimEnd()}\n\n`;
  const start = md.indexOf(`${heading}\n`);
  if (start >= 0) {
    const next = md.indexOf('\n## ', start + heading.length);
    return md.slice(0, start) + body + (next >= 0 ? md.slice(next + 1) : '');
  }
  const at = md.indexOf(`${beforeHeading}\n`);
  if (at >= 0) return md.slice(0, at) + body + md.slice(at);
  return `${md.trimEnd()}\n\n${body}`;
}

/** Writes the CLI section into `root`/BENCHMARKS.md from bench/results/cli.json (if that exists). */
export function writeCliSection(root: string): void {
  const file = join(root, 'bench', 'results', 'cli.json');
  if (!existsSync(file)) return;
  const mdFile = join(root, 'BENCHMARKS.md');
  const md = existsSync(mdFile) ? readFileSync(mdFile, 'utf8') : '# Benchmarks\n';
  const result = JSON.parse(readFileSync(file, 'utf8')) as CliResult;
  writeFileSync(mdFile, upsertSection(md, CLI_HEADING, cliSection(result)));
}
