import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../api/index.js';
import { diffLines, Transcript, usageText } from './transcript.js';

let seq = 0;
const rec = (event: AgentEvent['event']): AgentEvent => ({ seq: seq++, at: '2026-12-03T12:00:00.000Z', event });
const update = (u: Record<string, unknown>, turn = 1): AgentEvent => rec({ type: 'update', turn, update: u });
const chunk = (text: string): AgentEvent => update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });

/** The demo ACP agent's first turn, as agentctl records it. */
const TURN: AgentEvent[] = [
  rec({ type: 'session', session_id: 'demo-1', agent: { name: 'berth-demo-acp-agent', version: '0.1.0' } }),
  rec({ type: 'prompt', turn: 1, text: 'write NOTES.md' }),
  chunk('Looking at: '),
  chunk('write NOTES.md\n'),
  update({
    sessionUpdate: 'tool_call',
    toolCallId: 'call-1',
    title: 'Write NOTES.md',
    kind: 'edit',
    status: 'pending',
    content: [{ type: 'diff', path: '/ws/NOTES.md', oldText: null, newText: '# NOTES.md\nhello\n' }],
  }),
  rec({
    type: 'permission',
    request: {
      id: 'perm-1',
      turn: 1,
      tool_call: { toolCallId: 'call-1', title: 'Write NOTES.md', kind: 'edit' },
      options: [
        { option_id: 'allow', name: 'Allow', kind: 'allow_once' },
        { option_id: 'reject', name: 'Deny', kind: 'reject_once' },
      ],
      requested_at: '2026-12-03T12:00:00.000Z',
    },
  }),
  rec({ type: 'permission_answer', id: 'perm-1', outcome: 'selected', option_id: 'allow', by: 'person' }),
  update({ sessionUpdate: 'tool_call_update', toolCallId: 'call-1', status: 'completed' }),
  update({ sessionUpdate: 'usage_update', used: 60, size: 200000 }),
  chunk('Done.'),
  rec({ type: 'turn_end', turn: 1, stop_reason: 'end_turn', usage: { inputTokens: 14, outputTokens: 42, totalTokens: 56 } }),
];

describe('Transcript', () => {
  it('renders a turn: the prompt, joined message chunks, the tool call with its diff, the permission and its answer, the turn end with usage', () => {
    const t = new Transcript('s-1');
    const text = TURN.map((e) => t.push(e)).join('') + t.end();
    expect(text).toBe(
      [
        '== ACP session demo-1 with berth-demo-acp-agent 0.1.0',
        '',
        '>> turn 1: write NOTES.md',
        'agent: Looking at: write NOTES.md',
        'tool: Write NOTES.md [edit] (pending)',
        '  --- /ws/NOTES.md',
        '  +# NOTES.md',
        '  +hello',
        '  +',
        '?? permission requested (perm-1): Write NOTES.md [Allow / Deny] (answer: berth approve s-1 [--deny])',
        '-- permission perm-1 (Write NOTES.md): Allow (allow_once), by a person',
        'tool: Write NOTES.md: completed',
        'agent: Done.',
        '== turn 1 ended: end_turn (tokens: in 14, out 42, total 56)',
        '',
      ].join('\n'),
    );
  });

  it('keeps state across pages and ends an open line only once', () => {
    const t = new Transcript('s-1');
    expect(t.push(chunk('par'))).toBe('agent: par');
    expect(t.push(chunk('tial'))).toBe('tial');
    expect(t.end()).toBe('\n');
    expect(t.end()).toBe('');
  });

  it('tells denials, cancels, errors, plans and unknown updates', () => {
    const t = new Transcript('s-1');
    t.push(TURN[5]!);
    expect(t.push(rec({ type: 'permission_answer', id: 'perm-1', outcome: 'selected', option_id: 'reject', by: 'person' }))).toBe('-- permission perm-1 (Write NOTES.md): Deny (reject_once), by a person\n');
    expect(t.push(rec({ type: 'permission_answer', id: 'perm-2', outcome: 'cancelled', option_id: null, by: 'cancel' }))).toBe('-- permission perm-2 (perm-2): cancelled (cancel)\n');
    expect(t.push(rec({ type: 'turn_end', turn: 2, stop_reason: 'cancelled', usage: null }))).toBe('== turn 2 ended: cancelled\n');
    expect(t.push(rec({ type: 'error', turn: null, message: 'initialize failed' }))).toBe('!! error: initialize failed\n');
    expect(t.push(update({ sessionUpdate: 'plan', entries: [{ content: 'read', status: 'completed' }, { content: 'edit', status: 'pending' }] }))).toBe('plan:\n  [completed] read\n  [pending] edit\n');
    expect(t.push(update({ sessionUpdate: 'some_future_update' }))).toBe('[some_future_update]\n');
    // the agent's own bookkeeping (modes, options, titles, commands) stays out of the transcript
    for (const kind of ['current_mode_update', 'config_option_update', 'session_info_update', 'available_commands_update']) expect(t.push(update({ sessionUpdate: kind }))).toBe('');
  });
});

describe('diffLines', () => {
  it('shows the changed middle only', () => {
    expect(diffLines('a\nb\nc\n', 'a\nB\nc\n')).toEqual(['-b', '+B']);
    expect(diffLines(null, 'x')).toEqual(['+x']);
  });

  it('caps a long diff', () => {
    const lines = diffLines(null, Array.from({ length: 30 }, (_, i) => `l${i}`).join('\n'));
    expect(lines).toHaveLength(21);
    expect(lines.at(-1)).toBe('… 10 more line(s)');
  });
});

describe('usageText', () => {
  it('names the counts the agent reported', () => {
    expect(usageText({ inputTokens: 1, outputTokens: 2 })).toBe('tokens: in 1, out 2');
    expect(usageText({})).toBeNull();
    expect(usageText(null)).toBeNull();
  });
});

describe('a resumed conversation', () => {
  const replayed = (u: Record<string, unknown>): AgentEvent => rec({ type: 'update', turn: null, update: u, replay: true });
  const render = (events: AgentEvent[]): string => {
    const t = new Transcript('s1');
    return events.map((e) => t.push(e)).join('') + t.end();
  };

  it('shows the replayed history under its own header, then how the session was resumed', () => {
    const out = render([
      replayed({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'write A.md' } }),
      replayed({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Looked at: write A.md\n' } }),
      rec({ type: 'session', session_id: 'demo-1', agent: null, resume: { from: 'agent-1', session_id: 'demo-1', loaded: true, reason: null } }),
    ]);
    expect(out).toBe('== earlier conversation (replayed by the agent):\nyou: write A.md\nagent: Looked at: write A.md\n== ACP session demo-1 (conversation of agent-1 continued)\n');
  });

  it('says why a conversation was not continued', () => {
    const out = render([rec({ type: 'session', session_id: 'new-2', agent: null, resume: { from: 'agent-1', session_id: 'old', loaded: false, reason: 'the agent cannot load sessions' } })]);
    expect(out).toBe("== ACP session new-2 (new conversation; agent-1's was not continued: the agent cannot load sessions)\n");
  });
});
