import { describe, expect, it } from 'vitest';
import type { SessionEvent, SessionView } from '../controller/index.js';
import { ServerMetrics } from './metrics.js';
import { observeSessions } from './metrics-observer.js';

const at = '2026-01-01T00:00:00.000Z';

function view(id: string, executor: string, state: SessionView['state']): SessionView {
  return { id, name: null, executor, agent: 'demo', repository: {}, state, createdAt: at, updatedAt: at, stages: [], workspacePath: null, error: null, agentProcess: null };
}

/** A service whose sessions and events the test drives; `get` settles when the test says. */
function fakeService(initial: SessionView[]) {
  const listeners = new Set<(e: SessionEvent) => void>();
  const views = new Map(initial.map((v) => [v.id, v]));
  const gets: { id: string; settle: () => void }[] = [];
  return {
    views,
    gets,
    emit: (e: SessionEvent) => listeners.forEach((l) => l(e)),
    service: {
      list: async () => [...views.values()],
      get: (id: string) =>
        new Promise<SessionView>((resolve, reject) => {
          gets.push({
            id,
            settle: () => {
              const v = views.get(id);
              if (v) resolve(v);
              else reject(Object.assign(new Error('gone'), { name: 'SessionNotFoundError' }));
            },
          });
        }),
      subscribe: (l: (e: SessionEvent) => void) => {
        listeners.add(l);
        return () => listeners.delete(l);
      },
    },
  };
}

const stage = (sessionId: string, name: string, status: 'running' | 'succeeded' | 'failed', durationMs: number | null): SessionEvent => ({
  type: 'stage',
  sessionId,
  at,
  stage: { name, status, startedAt: at, endedAt: status === 'running' ? null : at, durationMs, reason: null, message: null },
});

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const newMetrics = () => new ServerMetrics({ targets: [{ name: 'local', executor: 'local', profile: '', type: 'local' }], version: 't', defaultMetrics: false });

describe('observeSessions', () => {
  it('counts the sessions that exist at the start by state', async () => {
    const f = fakeService([view('a', 'local', 'ready'), view('b', 'local', 'ready'), view('c', 'local', 'stopped')]);
    const m = newMetrics();
    const obs = observeSessions(f.service, m);
    await obs.seeded;
    const { text } = await m.render();
    expect(sample(text, 'berth_sessions{state="ready"}')).toBe(2);
    expect(sample(text, 'berth_sessions{state="stopped"}')).toBe(1);
    obs.close();
  });

  it('reads a new session’s executor once, then applies its events in order: states, ended stages, diagnostics', async () => {
    const f = fakeService([]);
    const m = newMetrics();
    const obs = observeSessions(f.service, m);
    await obs.seeded;
    f.views.set('n', view('n', 'local', 'launching'));
    f.emit({ type: 'state', sessionId: 'n', state: 'launching', error: null, at });
    f.emit(stage('n', 'workspace', 'running', null));
    f.emit(stage('n', 'workspace', 'succeeded', 1500));
    f.emit(stage('n', 'agent_start', 'failed', 20));
    f.emit({ type: 'diagnostic', sessionId: 'n', reason: 'Reconnecting', message: 'x', at });
    expect(f.gets.map((g) => g.id)).toEqual(['n']);
    f.gets[0]?.settle();
    await new Promise((r) => setImmediate(r));
    f.emit({ type: 'state', sessionId: 'n', state: 'failed', error: { message: 'no', stage: 'agent_start' }, at });
    const { text } = await m.render();
    expect(sample(text, 'berth_launch_stage_duration_seconds_count{executor="local",profile="",stage="workspace",outcome="succeeded"}')).toBe(1);
    expect(sample(text, 'berth_launch_stage_duration_seconds_sum{executor="local",profile="",stage="workspace",outcome="succeeded"}')).toBe(1.5);
    expect(sample(text, 'berth_launch_stage_duration_seconds_count{executor="local",profile="",stage="agent_start",outcome="failed"}')).toBe(1);
    expect(sample(text, 'berth_session_reconnects_total{executor="local",profile=""}')).toBe(1);
    expect(sample(text, 'berth_sessions{state="failed"}')).toBe(1);
    expect(sample(text, 'berth_sessions{state="launching"}')).toBe(0);
    expect(f.gets).toHaveLength(1);
    f.emit({ type: 'removed', sessionId: 'n', at });
    expect(sample((await m.render()).text, 'berth_sessions{state="failed"}')).toBe(0);
    obs.close();
  });

  it('drops the events of a session removed before its executor was read', async () => {
    const f = fakeService([]);
    const m = newMetrics();
    const obs = observeSessions(f.service, m);
    await obs.seeded;
    f.views.set('r', view('r', 'local', 'launching'));
    f.emit({ type: 'state', sessionId: 'r', state: 'launching', error: null, at });
    f.emit({ type: 'removed', sessionId: 'r', at });
    f.gets[0]?.settle();
    await new Promise((r) => setImmediate(r));
    expect(sample((await m.render()).text, 'berth_sessions{state="launching"}')).toBe(0);
    obs.close();
  });
});
