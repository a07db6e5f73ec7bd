import { describe, expect, it } from 'vitest';
import type { SessionView, StageRecord } from '../../../src/api/index.js';
import { applyEvent } from './session-events.js';

const stage = (name: string, status: StageRecord['status']): StageRecord => ({
  name,
  status,
  startedAt: '2026-01-01T00:00:00.000Z',
  endedAt: null,
  durationMs: null,
  reason: null,
  message: null,
});

const session: SessionView = {
  id: 's1',
  name: null,
  executor: 'local',
  agent: 'demo',
  repository: { path: '/r' },
  state: 'launching',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  stages: [stage('workspace', 'running')],
  workspacePath: null,
  error: null,
  agentProcess: null,
};

describe('applyEvent', () => {
  it('updates a known stage in place and appends a new one', () => {
    const a = applyEvent(session, { type: 'stage', sessionId: 's1', stage: stage('workspace', 'succeeded'), at: 'x' });
    expect(a.refetch).toBe(false);
    expect(a.session.stages.map((s) => [s.name, s.status])).toEqual([['workspace', 'succeeded']]);
    const b = applyEvent(a.session, { type: 'stage', sessionId: 's1', stage: stage('agent_start', 'waiting'), at: 'y' });
    expect(b.session.stages.map((s) => s.name)).toEqual(['workspace', 'agent_start']);
  });

  it('sets the state and asks for a refetch', () => {
    const r = applyEvent(session, { type: 'state', sessionId: 's1', state: 'ready', error: null, at: 'z' });
    expect(r).toMatchObject({ refetch: true, session: { state: 'ready' } });
  });

  it('does not refetch for the snapshot of an unchanged state', () => {
    const r = applyEvent(session, { type: 'state', sessionId: 's1', state: 'launching', error: null, at: 'z' });
    expect(r.refetch).toBe(false);
  });
});
