import { describe, expect, it } from 'vitest';
import { assessActivity, type ActivitySnapshot, type AgentActivity } from './assess.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const MIN = 60_000;
const WINDOW = 5 * MIN;
/** Well past every activity of the fixtures below. */
const LATER = T0 + 60 * MIN;

function agent(over: Partial<AgentActivity> = {}): AgentActivity {
  return { id: 'agent-1', running: true, acp: false, turnInFlight: false, pendingPermissions: 0, startedAt: T0, endedAt: null, lastOutputAt: null, lastEventAt: null, ...over };
}

function snap(over: Partial<ActivitySnapshot> = {}): ActivitySnapshot {
  return { agents: [agent()], childProcesses: [], lastChildSeenAt: null, processes: [], lastInput: null, ...over };
}

const at = (now: number, s: ActivitySnapshot = snap()) => assessActivity(s, { windowMs: WINDOW, now });

describe('assessActivity', () => {
  it('calls a quiet running agent idle once the window has passed since it started', () => {
    expect(at(T0 + WINDOW - 1).busy).toEqual([{ kind: 'agent', detail: 'agent-1 started 300 s ago' }]);
    expect(at(T0 + WINDOW)).toEqual({ idle: true, idleSince: new Date(T0).toISOString(), busy: [] });
  });

  it('keeps a raw agent busy while its output is within the window', () => {
    const s = snap({ agents: [agent({ lastOutputAt: T0 + 10 * MIN })] });
    expect(at(T0 + 14 * MIN, s)).toMatchObject({ idle: false, idleSince: null, busy: [{ kind: 'output', detail: 'agent-1 wrote output 240 s ago' }] });
    expect(at(T0 + 15 * MIN, s)).toEqual({ idle: true, idleSince: new Date(T0 + 10 * MIN).toISOString(), busy: [] });
  });

  it('is busy during an ACP turn however long ago anything was recorded', () => {
    const s = snap({ agents: [agent({ acp: true, turnInFlight: true, lastEventAt: T0 })] });
    expect(at(LATER, s)).toEqual({ idle: false, idleSince: null, busy: [{ kind: 'turn', detail: 'a turn of agent-1 is in flight' }] });
  });

  it('counts an ACP agent by its events, not by its stderr output', () => {
    const s = snap({ agents: [agent({ acp: true, lastEventAt: T0 + 10 * MIN, lastOutputAt: T0 + 20 * MIN })] });
    expect(at(T0 + 12 * MIN, s).busy).toEqual([{ kind: 'turn', detail: 'agent-1 recorded an ACP event 120 s ago' }]);
    expect(at(T0 + 16 * MIN, s)).toMatchObject({ idle: true, idleSince: new Date(T0 + 10 * MIN).toISOString() });
  });

  it('is busy while a permission request is pending', () => {
    const one = at(LATER, snap({ agents: [agent({ acp: true, pendingPermissions: 1 })] }));
    expect(one.busy).toEqual([{ kind: 'permission', detail: '1 permission request of agent-1 pending' }]);
    expect(at(LATER, snap({ agents: [agent({ acp: true, pendingPermissions: 2 })] })).busy[0]?.detail).toBe('2 permission requests of agent-1 pending');
  });

  it('is busy while a child process of the agent lives, window or not', () => {
    const s = snap({ childProcesses: [{ pid: 123, command: 'sleep 1200', agent: 'agent-1' }], lastChildSeenAt: LATER });
    expect(at(LATER, s)).toEqual({ idle: false, idleSince: null, busy: [{ kind: 'child-process', detail: 'sleep 1200 (pid 123)' }] });
  });

  it('stays busy for the window after a child process was last seen', () => {
    const s = snap({ lastChildSeenAt: T0 + 10 * MIN });
    expect(at(T0 + 11 * MIN, s).busy).toEqual([{ kind: 'child-process', detail: 'a child process of the agent was alive 60 s ago' }]);
    expect(at(T0 + 15 * MIN, s)).toMatchObject({ idle: true, idleSince: new Date(T0 + 10 * MIN).toISOString() });
  });

  it('is busy while a shell or an exec is open, and for the window after it closed', () => {
    const open = snap({
      processes: [
        { id: 'shell-a', kind: 'shell', command: 'sh -c …', running: true, endedAt: null },
        { id: 'p-1', kind: 'exec', command: 'make test', running: true, endedAt: null },
      ],
    });
    expect(at(LATER, open).busy).toEqual([
      { kind: 'shell', detail: 'shell shell-a is open' },
      { kind: 'exec', detail: 'make test (p-1) is running' },
    ]);
    const closed = snap({ processes: [{ id: 'p-1', kind: 'exec', command: 'make test', running: false, endedAt: T0 + 10 * MIN }] });
    expect(at(T0 + 10 * MIN + 500, closed).busy).toEqual([{ kind: 'exec', detail: 'make test (p-1) ended 500 ms ago' }]);
    expect(at(T0 + 15 * MIN, closed)).toMatchObject({ idle: true, idleSince: new Date(T0 + 10 * MIN).toISOString() });
  });

  it('restarts the window with every input', () => {
    const s = snap({ lastInput: { at: T0 + 30 * MIN, process: 'agent-1' } });
    expect(at(T0 + 34 * MIN, s).busy).toEqual([{ kind: 'input', detail: 'stdin written to agent-1 240 s ago' }]);
    expect(at(T0 + 35 * MIN, s)).toMatchObject({ idle: true, idleSince: new Date(T0 + 30 * MIN).toISOString() });
  });

  it('with no agent running: idle from when it exited, once the window has passed', () => {
    const s = snap({ agents: [agent({ running: false, endedAt: T0 + 10 * MIN, lastOutputAt: T0 + 9 * MIN })] });
    expect(at(T0 + 11 * MIN, s).busy).toContainEqual({ kind: 'agent', detail: 'agent-1 exited 60 s ago' });
    expect(at(T0 + 15 * MIN, s)).toEqual({ idle: true, idleSince: new Date(T0 + 10 * MIN).toISOString(), busy: [] });
  });

  it('ignores the turn and permission state of an agent that no longer runs', () => {
    const s = snap({ agents: [agent({ running: false, acp: true, turnInFlight: true, pendingPermissions: 1, endedAt: T0 })] });
    expect(at(LATER, s).idle).toBe(true);
  });

  it('reports an instance that never had any process as idle with no idleSince', () => {
    expect(at(LATER, snap({ agents: [] }))).toEqual({ idle: true, idleSince: null, busy: [] });
  });

  it('lists every reason at once, current ones first', () => {
    const s = snap({
      agents: [agent({ acp: true, turnInFlight: true, lastEventAt: LATER - 1000 })],
      childProcesses: [{ pid: 7, command: 'npm test', agent: 'agent-1' }],
      lastInput: { at: LATER - 2000, process: 'shell-a' },
    });
    expect(at(LATER, s).busy.map((b) => b.kind)).toEqual(['turn', 'child-process', 'turn', 'input']);
  });
});
