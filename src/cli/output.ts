/**
 * Output formatting: aligned tables, durations, ages, and json/yaml renderings.
 * Pure functions (the tests feed them fixed views and a fixed clock).
 * @module
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { EgressSummaryView, SessionView, StageRecord } from '../api/index.js';

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Left-aligned columns separated by two spaces; trailing spaces trimmed. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** `850ms`, `1.2s`, `2m05s`, `1h02m`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Bytes in SI units: `512 B`, `20 kB`, `3.1 MB` (one decimal below 10 of a unit). */
export function formatBytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = n;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  const text = unit === 0 || value >= 10 ? String(Math.round(value)) : value.toFixed(1);
  return `${text} ${units[unit]}`;
}

/** `12 connections (2 denied), 3.1 MB down / 20 kB up; broker: 4 requests, 1,234 in / 567 out tokens` (the broker part only when it was used). */
export function egressSummaryText(s: EgressSummaryView): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  let out = `${n(s.connections)} connection${s.connections === 1 ? '' : 's'}${s.denied > 0 ? ` (${n(s.denied)} denied)` : ''}, ${formatBytes(s.bytesDown)} down / ${formatBytes(s.bytesUp)} up`;
  if (s.brokerRequests > 0) out += `; broker: ${n(s.brokerRequests)} request${s.brokerRequests === 1 ? '' : 's'}, ${n(s.inputTokens)} in / ${n(s.outputTokens)} out tokens`;
  return out;
}

/** Coarse age of a timestamp: `12s`, `5m`, `3h`, `2d`. */
export function formatAge(iso: string, now: Date): string {
  const s = Math.max(0, Math.floor((now.getTime() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** `yaml`, loaded on first use only: most commands never print YAML (a faster start). */
let yamlModule: typeof Yaml | undefined;
const loadYaml = (): typeof Yaml => (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml);

export function formatData(data: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? `${JSON.stringify(data, null, 2)}\n` : loadYaml().stringify(data);
}

const repoText = (v: SessionView): string => v.repository.url ?? v.repository.path ?? '';

/** The agent process in one word or two: `running`, `exited (3)`, `exited` (no code: signal or lost), `-` (none). */
function agentStateText(v: SessionView): string {
  const p = v.agentProcess;
  if (!p) return '-';
  if (p.status === 'running') return (p.pendingApprovals ?? 0) > 0 ? `waits for approval (${p.pendingApprovals})` : 'running';
  return p.exitCode === null ? 'exited' : `exited (${p.exitCode})`;
}

/** Sum of the stage durations (what `launch`/`resume` report and `status` shows as Total); null while a stage is open. */
export function stagesTotalMs(stages: readonly StageRecord[]): number | null {
  if (stages.length === 0 || stages.some((s) => s.durationMs === null)) return null;
  return stages.reduce((sum, s) => sum + (s.durationMs ?? 0), 0);
}

/** `berth ls` in any format. */
export function renderSessionList(sessions: readonly SessionView[], format: OutputFormat, now: Date): string {
  if (format === 'json' || format === 'yaml') return formatData({ sessions }, format);
  if (sessions.length === 0) return 'No sessions. Start one with: berth launch --repo <url|path>\n';
  if (format === 'wide') {
    return formatTable(
      ['ID', 'NAME', 'STATE', 'AGENT', 'AGENT-STATE', 'EXECUTOR', 'AGE', 'REPOSITORY', 'BRANCH', 'WORKSPACE', 'ERROR'],
      sessions.map((v) => [
        v.id,
        v.name ?? '-',
        v.state,
        v.agent,
        agentStateText(v),
        v.executor,
        formatAge(v.createdAt, now),
        repoText(v),
        v.repository.branch ?? '-',
        v.workspacePath ?? '-',
        v.error ? oneLine(v.error.message, 60) : '-',
      ]),
    );
  }
  return formatTable(
    ['ID', 'NAME', 'STATE', 'AGENT', 'AGENT-STATE', 'EXECUTOR', 'AGE'],
    sessions.map((v) => [v.id, v.name ?? '-', v.state, v.agent, agentStateText(v), v.executor, formatAge(v.createdAt, now)]),
  );
}

export function stageDetail(stage: StageRecord): string {
  const parts = [stage.reason, stage.message].filter((p): p is string => p !== null && p !== '');
  return parts.join(': ');
}

function stageDuration(stage: StageRecord, now: Date): string {
  if (stage.durationMs !== null) return formatDuration(stage.durationMs);
  return `${formatDuration(now.getTime() - Date.parse(stage.startedAt))}…`;
}

/** `berth status ID` in any format; `egress`, the session's egress summary, is shown when it has connections. */
export function renderStatus(v: SessionView, format: OutputFormat, now: Date, egress?: EgressSummaryView | null): string {
  if (format === 'json' || format === 'yaml') return formatData(v, format);
  const agent = v.agentProcess
    ? `${v.agent} (${v.agentProcess.status}${v.agentProcess.exitCode !== null ? `, exit code ${v.agentProcess.exitCode}` : ''}${acpText(v)})`
    : v.agent;
  const lines: [string, string][] = [
    ['Session', v.name ? `${v.id} (${v.name})` : v.id],
    ['State', v.state],
    ['Agent', agent],
    ['Executor', v.executor],
    ['Repository', `${repoText(v)}${v.repository.branch ? ` (branch ${v.repository.branch})` : ''}${v.repository.credentials ? ' (credential stored encrypted)' : ''}`],
    ['Workspace', v.workspacePath ?? '-'],
    ['Created', `${v.createdAt} (${formatAge(v.createdAt, now)} ago)`],
  ];
  if (egress && egress.connections > 0) lines.push(['Egress', `${egressSummaryText(egress)} (berth egress ${v.id})`]);
  if (v.error) lines.push(['Error', `${v.error.stage ? `[${v.error.stage}] ` : ''}${v.error.message}`]);
  let out = lines.map(([k, val]) => `${`${k}:`.padEnd(12)}${val}`).join('\n') + '\n';
  if (v.stages.length > 0) {
    out += '\n';
    out += formatTable(
      ['STAGE', 'STATUS', 'DURATION', 'DETAIL'],
      v.stages.map((s) => [s.name, s.status, stageDuration(s, now), stageDetail(s)]),
    );
    const total = stagesTotalMs(v.stages);
    if (total !== null) out += `Total: ${formatDuration(total)}\n`;
    const waited = v.stages.filter((s) => (s.waits ?? []).length > 0);
    if (waited.length > 0) out += '\nWaits:\n';
    for (const s of waited) {
      for (const w of s.waits ?? []) {
        const offset = Math.max(0, Date.parse(w.at) - Date.parse(s.startedAt));
        out += `  ${s.name} +${formatDuration(offset)}  ${oneLine(`${w.reason}${w.message ? `: ${w.message}` : ''}`, 160)}\n`;
      }
    }
  }
  return out;
}

/** An ACP agent's turns and approvals for `status`: `, ACP, 2 turns, turn running, 1 approval pending (berth approve ID)`. */
function acpText(v: SessionView): string {
  const p = v.agentProcess;
  if (v.protocol !== 'acp' || !p || p.turns === undefined) return '';
  const pending = p.pendingApprovals ?? 0;
  return `, ACP, ${p.turns} turn${p.turns === 1 ? '' : 's'}${p.turnRunning ? ', turn running' : ''}${usageText(p.usage)}${pending > 0 ? `, ${pending} approval${pending === 1 ? '' : 's'} pending (berth approve ${v.id})` : ''}`;
}

/** `, 3 tool calls, 1,234 tokens (in 1,000, out 234), 0.12 USD` — what the agent reported, nothing it did not. */
export function usageText(u: NonNullable<SessionView['agentProcess']>['usage']): string {
  if (u === undefined) return '';
  const n = (x: number): string => x.toLocaleString('en-US');
  let out = `, ${u.toolCalls} tool call${u.toolCalls === 1 ? '' : 's'}`;
  if (u.totalTokens !== null) out += `, ${n(u.totalTokens)} tokens${u.inputTokens !== null && u.outputTokens !== null ? ` (in ${n(u.inputTokens)}, out ${n(u.outputTokens)})` : ''}`;
  if (u.cost !== null) out += `, ${u.cost.amount.toFixed(2)} ${u.cost.currency}`;
  return out;
}

function oneLine(s: string, max: number): string {
  const flat = s.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
