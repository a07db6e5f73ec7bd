/** Display helpers for sessions (pure). @module */
import type { SessionView, StageRecord } from '../../../src/api/index.js';

/** `12 s`, `5 min`, `3 h`, `2 d` since `iso`. */
export function formatAge(iso: string, now: number): string {
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}

/** The stage a person wants to see: the one running or waiting, else the failed one, else the last. */
export function currentStage(stages: readonly StageRecord[]): StageRecord | null {
  return (
    stages.find((s) => s.status === 'running' || s.status === 'waiting') ??
    stages.find((s) => s.status === 'failed') ??
    stages[stages.length - 1] ??
    null
  );
}

/** `agent_start: waiting — ImagePullBackOff: back-off pulling image` */
export function describeStage(stage: StageRecord | null): string {
  if (!stage) return '—';
  const why = [stage.reason, stage.message].filter(Boolean).join(': ');
  return `${stage.name}: ${stage.status}${why ? ` — ${why}` : ''}`;
}

export function repositoryLabel(s: SessionView): string {
  const r = s.repository;
  const where = r.url ?? r.path ?? '(empty workspace)';
  return r.branch ? `${where} @ ${r.branch}` : where;
}

export function agentStateLabel(s: SessionView): string {
  const p = s.agentProcess;
  if (!p) return '—';
  if (p.status === 'exited') return `exited (${p.exitCode ?? 'signal'})`;
  return p.status;
}

export function sessionTitle(s: SessionView): string {
  return s.name ?? s.id;
}

/** Permission requests an ACP agent waits on for a person (0 for a raw agent, or one not running). */
export function pendingApprovals(s: SessionView): number {
  const p = s.agentProcess;
  return s.state === 'ready' && p?.status === 'running' ? (p.pendingApprovals ?? 0) : 0;
}
