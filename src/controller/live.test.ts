import { describe, expect, it } from 'vitest';
import type { ExecutorInstance } from '../executors/executor.js';
import { LiveSessions } from './live.js';
import { toView } from './views.js';

const closed: string[] = [];
const instance = (id: string) =>
  ({
    identity: { instanceId: id },
    close: () => {
      closed.push(id);
      return Promise.resolve();
    },
  }) as unknown as ExecutorInstance;

describe('LiveSessions', () => {
  it('closes the old entry when a session is replaced', () => {
    const live = new LiveSessions();
    const first = live.replace('s-1', instance('i-1'), 'agent-1');
    const second = live.replace('s-1', instance('i-2'));
    expect(first.abort.signal.aborted, 'streams of the old client end').toBe(true);
    expect(second.abort.signal.aborted).toBe(false);
    expect(closed, 'the old instance releases its local connections (port-forwards)').toContain('i-1');
    expect(closed).not.toContain('i-2');
    expect(live.get('s-1')).toBe(second);
    expect(live.size).toBe(1);
  });

  it('take removes and closes; closeAll empties the map', () => {
    const live = new LiveSessions();
    const a = live.replace('a', instance('i-a'));
    live.replace('b', instance('i-b'));
    expect(live.take('a')).toBe(a);
    expect(a.abort.signal.aborted).toBe(true);
    expect(closed).toContain('i-a');
    expect(live.take('a')).toBeUndefined();
    live.closeAll();
    expect(live.size).toBe(0);
    expect(closed).toContain('i-b');
  });
});

describe('toView', () => {
  const record = {
    id: 's-1',
    name: null,
    executor: 'local',
    agent: 'demo',
    repository: { path: '/r' },
    request: { env: { SECRETISH: 'x' }, secretEnv: [], prompt: null, agentCommand: ['node'], agentEnv: {}, profileEnv: {} },
    state: 'ready',
    error: null,
    stages: [],
    workspacePath: '/w',
    createdAt: 'c',
    updatedAt: 'u',
  };

  it('maps a record and the live agent, without the launch request', () => {
    const live = new LiveSessions().replace('s-1', instance('i'), 'agent-1');
    const view = toView(record, live);
    expect(view).toEqual({
      id: 's-1',
      name: null,
      executor: 'local',
      agent: 'demo',
      repository: { path: '/r' },
      state: 'ready',
      createdAt: 'c',
      updatedAt: 'u',
      stages: [],
      workspacePath: '/w',
      error: null,
      agentProcess: { id: 'agent-1', status: 'running', exitCode: null },
      protocol: 'raw',
    });
  });

  it('shows an unknown stored state as failed', () => {
    expect(toView({ ...record, state: 'exploded' }, undefined).state).toBe('failed');
  });
});
