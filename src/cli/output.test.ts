import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { SessionView } from '../api/index.js';
import { formatAge, formatDuration, formatTable, renderSessionList, renderStatus, usageText } from './output.js';
import { LaunchProgress } from './progress.js';

const NOW = new Date('2026-01-01T12:00:00.000Z');

const view = (over: Partial<SessionView> = {}): SessionView => ({
  id: 's-1',
  name: 'fix',
  executor: 'local',
  agent: 'demo',
  repository: { path: '/src/app', branch: 'main' },
  state: 'ready',
  createdAt: '2026-01-01T11:55:00.000Z',
  updatedAt: '2026-01-01T11:55:01.000Z',
  stages: [
    { name: 'workspace', status: 'succeeded', startedAt: '2026-01-01T11:55:00.000Z', endedAt: '2026-01-01T11:55:00.500Z', durationMs: 500, reason: null, message: null },
    { name: 'agent_start', status: 'failed', startedAt: '2026-01-01T11:55:00.500Z', endedAt: '2026-01-01T11:55:02.000Z', durationMs: 1500, reason: 'AgentExited', message: 'exit code 1' },
  ],
  workspacePath: '/data/workspaces/s-1/repo',
  error: null,
  agentProcess: { id: 'agent', status: 'running', exitCode: null },
  ...over,
});

describe('formatTable', () => {
  it('aligns columns and trims trailing spaces', () => {
    expect(formatTable(['A', 'LONG'], [['xyz', '1'], ['q', '']])).toBe('A    LONG\nxyz  1\nq\n');
  });
});

describe('formatDuration / formatAge', () => {
  it.each([
    [0, '0ms'],
    [850, '850ms'],
    [1234, '1.2s'],
    [125_000, '2m05s'],
    [3_720_000, '1h02m'],
  ])('formats %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('gives coarse ages', () => {
    expect(formatAge('2026-01-01T11:59:50.000Z', NOW)).toBe('10s');
    expect(formatAge('2026-01-01T11:55:00.000Z', NOW)).toBe('5m');
    expect(formatAge('2025-12-30T12:00:00.000Z', NOW)).toBe('2d');
  });
});

describe('renderSessionList', () => {
  it.each([
    ['a running agent', { id: 'agent-1', status: 'running', exitCode: null }, 'running'],
    ['an agent that exited with a code', { id: 'agent-1', status: 'exited', exitCode: 3 }, 'exited (3)'],
    ['an agent that exited without a code', { id: 'agent-1', status: 'exited', exitCode: null }, 'exited'],
    ['no agent process', null, '-'],
  ] as const)('shows the agent state of %s in the table and the wide table', (_what, agentProcess, text) => {
    for (const format of ['table', 'wide'] as const) {
      const [header, row] = renderSessionList([view({ agentProcess: agentProcess === null ? null : { ...agentProcess } })], format, NOW).split('\n');
      const at = header!.indexOf('AGENT-STATE');
      expect(row!.slice(at).split(/\s{2,}/)[0]).toBe(text);
    }
  });

  it('prints a table with one row per session', () => {
    expect(renderSessionList([view()], 'table', NOW)).toBe(
      'ID   NAME  STATE  AGENT  AGENT-STATE  EXECUTOR  AGE\ns-1  fix   ready  demo   running      local     5m\n',
    );
  });

  it('adds repository, branch, workspace and error columns in wide', () => {
    const out = renderSessionList([view({ error: { message: 'boom', stage: 'x' } })], 'wide', NOW);
    expect(out.split('\n')[0]).toBe('ID   NAME  STATE  AGENT  AGENT-STATE  EXECUTOR  AGE  REPOSITORY  BRANCH  WORKSPACE                  ERROR');
    expect(out.split('\n')[1]).toBe('s-1  fix   ready  demo   running      local     5m   /src/app    main    /data/workspaces/s-1/repo  boom');
  });

  it.each(['json', 'yaml'] as const)('round-trips the views as %s', (format) => {
    const out = renderSessionList([view()], format, NOW);
    expect(format === 'json' ? JSON.parse(out) : parse(out)).toEqual({ sessions: [view()] });
  });

  it('tells how to start when there are no sessions', () => {
    expect(renderSessionList([], 'table', NOW)).toMatch(/No sessions\. Start one with: berth launch/);
  });
});

describe('renderStatus', () => {
  it('shows the session and each stage with its duration and detail', () => {
    const out = renderStatus(view(), 'table', NOW);
    expect(out).toContain('State:      ready\n');
    expect(out).toContain('Agent:      demo (running)\n');
    expect(out).toContain('Repository: /src/app (branch main)\n');
    expect(out).toContain('workspace    succeeded  500ms');
    expect(out).toContain('agent_start  failed     1.5s      AgentExited: exit code 1');
    expect(out).toContain('Total: 2.0s');
  });

  it('shows a running stage with its elapsed time so far', () => {
    const out = renderStatus(
      view({ stages: [{ name: 'workspace', status: 'waiting', startedAt: '2026-01-01T11:59:57.000Z', endedAt: null, durationMs: null, reason: 'CloneSlow', message: null }] }),
      'table',
      NOW,
    );
    expect(out).toContain('workspace  waiting  3.0s…     CloneSlow');
  });

  it('is the plain view in json', () => {
    expect(JSON.parse(renderStatus(view(), 'json', NOW))).toEqual(view());
  });
});

describe('LaunchProgress', () => {
  it('prints finished and waiting stages once and reports the outcome', () => {
    const lines: string[] = [];
    const p = new LaunchProgress((l) => lines.push(l));
    const base = { sessionId: 's', at: '' };
    const stage = view().stages[0]!;
    p.onEvent({ ...base, type: 'stage', stage: { ...stage, status: 'running', durationMs: null } });
    expect(p.current).toMatchObject({ name: 'workspace', detail: 'running' });
    p.onEvent({ ...base, type: 'stage', stage: { ...stage, status: 'waiting', durationMs: null, reason: 'Pull', message: 'image' } });
    expect(p.current).toMatchObject({ name: 'workspace', detail: 'waiting: Pull: image' });
    p.onEvent({ ...base, type: 'stage', stage: { ...stage, status: 'waiting', durationMs: null, reason: 'Pull', message: 'image' } });
    p.onEvent({ ...base, type: 'stage', stage });
    expect(p.current, 'a finished stage is no longer in progress').toBeNull();
    expect(p.onEvent({ ...base, type: 'state', state: 'launching', error: null })).toBeUndefined();
    const outcome = p.onEvent({ ...base, type: 'state', state: 'failed', error: { message: 'clone failed', stage: 'workspace' } });
    expect(lines).toEqual(['  … workspace         waiting: Pull: image', '  ✓ workspace         500ms']);
    expect(outcome).toEqual({ kind: 'failed', stage: 'workspace', message: 'clone failed', state: 'failed' });
  });

  it('prints each stage once when the events replayed after the snapshot repeat older records', () => {
    const lines: string[] = [];
    const p = new LaunchProgress((l) => lines.push(l));
    const base = { sessionId: 's', at: '' };
    const done = view().stages[0]!;
    const running = { ...done, status: 'running' as const, endedAt: null, durationMs: null };
    const next = { name: 'agentctl_start', status: 'running' as const, startedAt: done.endedAt!, endedAt: null, durationMs: null, reason: null, message: null };
    // the snapshot (already finished) …
    p.onEvent({ ...base, type: 'stage', stage: done });
    p.onEvent({ ...base, type: 'stage', stage: next });
    p.onEvent({ ...base, type: 'state', state: 'launching', error: null });
    // … then the events buffered while it was read: the same stage, running and finished again
    p.onEvent({ ...base, type: 'stage', stage: running });
    p.onEvent({ ...base, type: 'stage', stage: done });
    expect(lines).toEqual(['  ✓ workspace         500ms']);
    expect(p.current, 'a stale record does not bring a finished stage back to the status line').toMatchObject({ name: 'agentctl_start' });
    // a new run of the same stage (a resume) is shown again
    p.onEvent({ ...base, type: 'stage', stage: { ...done, startedAt: '2026-01-01T11:56:00.000Z', endedAt: '2026-01-01T11:56:00.250Z', durationMs: 250 } });
    expect(lines).toEqual(['  ✓ workspace         500ms', '  ✓ workspace         250ms']);
  });
});

describe('usageText', () => {
  it('shows what the agent reported and nothing it did not', () => {
    expect(usageText(undefined)).toBe('');
    expect(usageText({ toolCalls: 1, inputTokens: null, outputTokens: null, totalTokens: null, context: null, cost: null })).toBe(', 1 tool call');
    expect(usageText({ toolCalls: 3, inputTokens: 1000, outputTokens: 234, totalTokens: 1234, context: { used: 5, size: 10 }, cost: { amount: 0.123, currency: 'USD' } })).toBe(
      ', 3 tool calls, 1,234 tokens (in 1,000, out 234), 0.12 USD',
    );
  });
});
