/**
 * The running usage of an ACP conversation (protocol/acp.ts AcpUsage), tallied from the events
 * agentctl records: `tool_call` updates count as tool calls (not the history a loaded session
 * replays), a turn's reported usage adds its tokens, a `usage_update` gives the latest context
 * window and cost. Pure.
 * @module
 */
import type { AcpEvent, AcpUsage } from '../../protocol/index.js';

export const NO_USAGE: AcpUsage = { tool_calls: 0, input_tokens: null, output_tokens: null, total_tokens: null, context: null, cost: null };

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
}

function add(a: number | null, b: number | null): number | null {
  return b === null ? a : (a ?? 0) + b;
}

/** `usage` after `event`. */
export function tally(usage: AcpUsage, event: AcpEvent): AcpUsage {
  if (event.type === 'turn_end' && event.usage !== null) {
    const u = event.usage;
    return { ...usage, input_tokens: add(usage.input_tokens, num(u['inputTokens'])), output_tokens: add(usage.output_tokens, num(u['outputTokens'])), total_tokens: add(usage.total_tokens, num(u['totalTokens'])) };
  }
  if (event.type !== 'update' || event.replay === true) return usage;
  const u = event.update;
  if (u['sessionUpdate'] === 'tool_call') return { ...usage, tool_calls: usage.tool_calls + 1 };
  if (u['sessionUpdate'] !== 'usage_update') return usage;
  const used = num(u['used']);
  const size = num(u['size']);
  const cost = u['cost'] as { amount?: unknown; currency?: unknown } | null | undefined;
  return {
    ...usage,
    context: used !== null && size !== null ? { used, size } : usage.context,
    cost: cost && typeof cost.amount === 'number' && typeof cost.currency === 'string' ? { amount: cost.amount, currency: cost.currency } : usage.cost,
  };
}
