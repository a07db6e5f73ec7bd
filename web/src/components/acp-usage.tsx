/**
 * What an ACP conversation used: turns, tool calls, and tokens, context and cost where the agent
 * reported them (over every run that continued it; nothing shows for what is not known).
 * @module
 */
import type { JSX } from 'preact';
import type { Usage } from '../lib/acp-model.js';
import { tokensText } from './acp-transcript.js';

const int = (n: number): string => n.toLocaleString('en');

export function UsageFacts({ usage }: { usage: Usage }): JSX.Element {
  const tokens = tokensText(usage.tokens);
  return (
    <dl class="facts acp-usage" data-testid="acp-usage">
      <div>
        <dt title="Turns sent to this run of the agent">Turns</dt>
        <dd data-testid="acp-usage-turns">{usage.turns}</dd>
      </div>
      {usage.earlierTurns > 0 && (
        <div>
          <dt title="The turns of the earlier conversation this one continues, as the agent restored it">Earlier turns</dt>
          <dd data-testid="acp-usage-earlier-turns">{usage.earlierTurns}</dd>
        </div>
      )}
      <div>
        <dt>Tool calls</dt>
        <dd data-testid="acp-usage-tools">{usage.toolCalls}</dd>
      </div>
      {tokens && (
        <div>
          <dt title="Summed over the turns that reported usage, earlier runs included">Tokens</dt>
          <dd data-testid="acp-usage-tokens">{tokens}</dd>
        </div>
      )}
      {usage.context && (
        <div>
          <dt>Context</dt>
          <dd data-testid="acp-usage-context">
            {int(usage.context.used)} / {int(usage.context.size)}
          </dd>
        </div>
      )}
      {usage.cost && (
        <div>
          <dt>Cost</dt>
          <dd data-testid="acp-usage-cost">
            {usage.cost.amount.toLocaleString('en', { maximumFractionDigits: 4 })} {usage.cost.currency}
          </dd>
        </div>
      )}
    </dl>
  );
}
