import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../../src/api/index.js';
import { foldEvents, requestToolCall, shownUsage, type Usage } from './acp-model.js';
import { lineDiff } from './line-diff.js';

let seq = 0;
const ev = (event: AgentEvent['event']): AgentEvent => ({ seq: seq++, at: '2026-01-01T00:00:00.000Z', event });
const update = (turn: number, u: Record<string, unknown>): AgentEvent => ev({ type: 'update', turn, update: u });
const say = (turn: number, text: string): AgentEvent => update(turn, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });

const diff = { type: 'diff', path: '/w/NOTES.md', oldText: null, newText: '# NOTES.md\n\nWritten\n' };
const request = {
  id: 'perm-1',
  turn: 1,
  tool_call: { toolCallId: 'call-1', title: 'Write NOTES.md', kind: 'edit', status: 'pending', content: [diff], locations: [{ path: '/w/NOTES.md' }] },
  options: [
    { option_id: 'allow', name: 'Allow', kind: 'allow_once' },
    { option_id: 'allow-always', name: 'Allow all edits', kind: 'allow_always' },
    { option_id: 'reject', name: 'Deny', kind: 'reject_once' },
  ],
  requested_at: '2026-01-01T00:00:00.000Z',
};

/** A demo-acp turn up to its permission request. */
const untilPermission = (): AgentEvent[] => [
  ev({ type: 'session', session_id: 's', agent: { name: 'demo', version: '1' } }),
  ev({ type: 'prompt', turn: 1, text: 'write NOTES.md' }),
  say(1, 'Looking'),
  say(1, ' at it\n'),
  update(1, { sessionUpdate: 'tool_call', toolCallId: 'call-1', title: 'Write NOTES.md', kind: 'edit', status: 'pending', content: [diff], locations: [{ path: '/w/NOTES.md', line: 3 }] }),
  ev({ type: 'permission', request }),
];

describe('foldEvents', () => {
  it('joins streamed chunks, keeps the pending request and a running turn', () => {
    const m = foldEvents(untilPermission());
    expect(m.entries.map((e) => e.kind)).toEqual(['session', 'prompt', 'message', 'tool', 'permission']);
    expect(m.entries[2]).toMatchObject({ role: 'agent', text: 'Looking at it\n' });
    expect(m.entries[3]).toMatchObject({ call: { title: 'Write NOTES.md', kind: 'edit', status: 'pending', locations: ['/w/NOTES.md:3'], diffs: [{ path: '/w/NOTES.md', oldText: null }] } });
    expect(m.pending.map((p) => p.id)).toEqual(['perm-1']);
    expect(m.turnRunning).toBe(true);
    expect(requestToolCall(m.pending[0]!, m.entries)).toMatchObject({ title: 'Write NOTES.md', diffs: [{ newText: diff.newText }] });
  });

  it('answers the request, updates the tool call in place and sums usage at the turn end', () => {
    const m = foldEvents([
      ...untilPermission(),
      ev({ type: 'permission_answer', id: 'perm-1', outcome: 'selected', option_id: 'allow', by: 'person' }),
      update(1, { sessionUpdate: 'tool_call_update', toolCallId: 'call-1', status: 'completed' }),
      update(1, { sessionUpdate: 'usage_update', used: 60, size: 200000, cost: { amount: 0.012, currency: 'USD' } }),
      update(1, { sessionUpdate: 'plan', entries: [{ content: 'a', status: 'completed', priority: 'high' }] }),
      update(1, { sessionUpdate: 'plan', entries: [{ content: 'a', status: 'completed' }, { content: 'b', status: 'in_progress' }] }),
      ev({ type: 'turn_end', turn: 1, stop_reason: 'end_turn', usage: { inputTokens: 18, outputTokens: 42, totalTokens: 60 } }),
      ev({ type: 'prompt', turn: 2, text: 'again' }),
      ev({ type: 'turn_end', turn: 2, stop_reason: 'end_turn', usage: { inputTokens: 5, outputTokens: 42, totalTokens: 47 } }),
    ]);
    expect(m.pending).toEqual([]);
    expect(m.turnRunning).toBe(false);
    const tools = m.entries.filter((e) => e.kind === 'tool');
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({ call: { status: 'completed', title: 'Write NOTES.md', diffs: [{ path: '/w/NOTES.md' }] } });
    expect(m.entries.find((e) => e.kind === 'permission')).toMatchObject({ answer: 'Allow, by a person' });
    expect(m.entries.filter((e) => e.kind === 'plan')).toEqual([expect.objectContaining({ entries: [expect.objectContaining({ content: 'a' }), expect.objectContaining({ status: 'in_progress' })] })]);
    expect(m.usage).toEqual({ turns: 2, earlierTurns: 0, toolCalls: 1, tokens: { input: 23, output: 84, total: 107 }, context: { used: 60, size: 200000 }, cost: { amount: 0.012, currency: 'USD' } });
  });

  it('reports no tokens when no turn did, and ends a turn on its error', () => {
    const m = foldEvents([ev({ type: 'prompt', turn: 1, text: 'x' }), ev({ type: 'error', turn: 1, message: 'boom' })]);
    expect(m.usage.tokens).toBeNull();
    expect(m.usage.cost).toBeNull();
    expect(m.turnRunning).toBe(false);
  });
});

describe('a run continuing an earlier conversation', () => {
  const replayed = (u: Record<string, unknown>): AgentEvent => ev({ type: 'update', turn: null, update: u, replay: true });
  const earlierUsage = { tool_calls: 1, input_tokens: 18, output_tokens: 42, total_tokens: 60, context: { used: 60, size: 200000 }, cost: null };
  const resumed = (): AgentEvent[] => [
    replayed({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'please write ' } }),
    replayed({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'NOTES.md' } }),
    replayed({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Looked at it' } }),
    replayed({ sessionUpdate: 'tool_call', toolCallId: 'call-1', title: 'Write NOTES.md', status: 'completed' }),
    replayed({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'and again' } }),
    replayed({ sessionUpdate: 'usage_update', used: 1, size: 10 }),
    ev({ type: 'session', session_id: 's', agent: null, resume: { from: 'agent-1', session_id: 's', loaded: true, reason: null, usage: earlierUsage } }),
  ];

  it('shows the replayed history under its heading, then how the conversation continued', () => {
    const m = foldEvents(resumed());
    expect(m.entries.map((e) => [e.kind, e.replay ?? false])).toEqual([
      ['history', true],
      ['message', true],
      ['message', true],
      ['tool', true],
      ['message', true],
      ['session', false],
    ]);
    expect(m.entries[1]).toMatchObject({ role: 'user', text: 'please write NOTES.md' });
    expect(m.entries[2]).toMatchObject({ role: 'agent', text: 'Looked at it' });
    expect(m.entries[5]).toMatchObject({ resume: { from: 'agent-1', loaded: true, reason: null } });
    expect(m.turnRunning).toBe(false);
  });

  it("counts the earlier runs' usage once (not the replayed tool call), and this run's on top", () => {
    const m = foldEvents([
      ...resumed(),
      ev({ type: 'prompt', turn: 1, text: 'write NOTES.md' }),
      update(1, { sessionUpdate: 'tool_call', toolCallId: 'call-1', title: 'Write NOTES.md again', status: 'pending' }),
      ev({ type: 'turn_end', turn: 1, stop_reason: 'end_turn', usage: { inputTokens: 2, outputTokens: 42, totalTokens: 44 } }),
    ]);
    expect(m.usage).toEqual({ turns: 1, earlierTurns: 2, toolCalls: 2, tokens: { input: 20, output: 84, total: 104 }, context: { used: 60, size: 200000 }, cost: null });
    // this run's call-1 is its own entry, not the replayed one
    const tools = m.entries.filter((e) => e.kind === 'tool');
    expect(tools.map((t) => [t.call.title, t.replay ?? false])).toEqual([
      ['Write NOTES.md', true],
      ['Write NOTES.md again', false],
    ]);
  });

  it('says why a new conversation was opened', () => {
    const m = foldEvents([ev({ type: 'session', session_id: 's2', agent: { name: 'a', version: '1' }, resume: { from: 'agent-1', session_id: null, loaded: false, reason: 'never opened' } })]);
    expect(m.entries).toEqual([expect.objectContaining({ kind: 'session', resume: { from: 'agent-1', loaded: false, reason: 'never opened' } })]);
    expect(m.usage.toolCalls).toBe(0);
  });
});

describe('shownUsage', () => {
  const events: Usage = { turns: 1, earlierTurns: 0, toolCalls: 2, tokens: { input: 5, output: null, total: 5 }, context: { used: 9, size: 10 }, cost: null };
  const view = { toolCalls: 1, inputTokens: 3, outputTokens: 42, totalTokens: 45, context: { used: 7, size: 10 }, cost: { amount: 1, currency: 'USD' } };

  it('takes the events alone without a view, else the larger counts and the latest context and cost', () => {
    expect(shownUsage(undefined, events, false)).toBe(events);
    expect(shownUsage(view, events, false)).toEqual({ ...events, toolCalls: 2, tokens: { input: 5, output: 42, total: 45 }, context: { used: 9, size: 10 }, cost: { amount: 1, currency: 'USD' } });
  });

  it("prefers the view's context once events were dropped, and shows no tokens when neither knows them", () => {
    const none = { ...view, inputTokens: null, outputTokens: null, totalTokens: null };
    expect(shownUsage(none, { ...events, tokens: null }, true)).toMatchObject({ tokens: null, context: { used: 7, size: 10 } });
  });
});

describe('lineDiff', () => {
  it('shows a new file as added lines', () => {
    expect(lineDiff(null, 'a\nb')).toEqual([
      { op: 'add', text: 'a' },
      { op: 'add', text: 'b' },
    ]);
  });

  it('keeps a little context around a change and folds the rest', () => {
    const old = ['1', '2', '3', '4', '5', '6', '7', '8'].join('\n');
    const next = ['1', '2', '3', '4', 'five', '6', '7', '8'].join('\n');
    expect(lineDiff(old, next)).toEqual([
      { op: 'skip', count: 2 },
      { op: 'same', text: '3' },
      { op: 'same', text: '4' },
      { op: 'del', text: '5' },
      { op: 'add', text: 'five' },
      { op: 'same', text: '6' },
      { op: 'same', text: '7' },
      { op: 'same', text: '8' },
    ]);
  });

  it('diffs the changed middle line by line', () => {
    expect(lineDiff('a\nx\nb\nc', 'a\nb\ny\nc').filter((l) => l.op !== 'same')).toEqual([
      { op: 'del', text: 'x' },
      { op: 'add', text: 'y' },
    ]);
  });
});
