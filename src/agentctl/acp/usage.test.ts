import { describe, expect, it } from 'vitest';
import type { AcpEvent } from '../../protocol/index.js';
import { NO_USAGE, tally } from './usage.js';

const update = (u: Record<string, unknown>, replay = false): AcpEvent => ({ type: 'update', turn: 1, update: u, ...(replay ? { replay: true as const } : {}) });

describe('tally', () => {
  it('counts tool calls, sums the turns\' tokens and keeps the latest context and cost', () => {
    const events: AcpEvent[] = [
      update({ sessionUpdate: 'tool_call', toolCallId: 'a' }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'a', status: 'completed' }),
      update({ sessionUpdate: 'usage_update', used: 100, size: 1000, cost: { amount: 0.5, currency: 'USD' } }),
      { type: 'turn_end', turn: 1, stop_reason: 'end_turn', usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } },
      update({ sessionUpdate: 'usage_update', used: 300, size: 1000 }),
      { type: 'turn_end', turn: 2, stop_reason: 'end_turn', usage: { inputTokens: 20, outputTokens: 7, totalTokens: 27 } },
    ];
    expect(events.reduce(tally, NO_USAGE)).toEqual({ tool_calls: 1, input_tokens: 30, output_tokens: 12, total_tokens: 42, context: { used: 300, size: 1000 }, cost: { amount: 0.5, currency: 'USD' } });
  });

  it('ignores replayed history and usage the agent does not report', () => {
    const events: AcpEvent[] = [update({ sessionUpdate: 'tool_call', toolCallId: 'old' }, true), { type: 'turn_end', turn: 1, stop_reason: 'cancelled', usage: null }, update({ sessionUpdate: 'usage_update', used: 'x' })];
    expect(events.reduce(tally, NO_USAGE)).toEqual(NO_USAGE);
  });
});
