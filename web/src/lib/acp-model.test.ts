import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../../src/api/index.js';
import { foldEvents, requestToolCall } from './acp-model.js';
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
    expect(m.usage).toEqual({ turns: 2, toolCalls: 1, tokens: { input: 23, output: 84, total: 107 }, context: { used: 60, size: 200000 }, cost: { amount: 0.012, currency: 'USD' } });
  });

  it('reports no tokens when no turn did, and ends a turn on its error', () => {
    const m = foldEvents([ev({ type: 'prompt', turn: 1, text: 'x' }), ev({ type: 'error', turn: 1, message: 'boom' })]);
    expect(m.usage.tokens).toBeNull();
    expect(m.usage.cost).toBeNull();
    expect(m.turnRunning).toBe(false);
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
