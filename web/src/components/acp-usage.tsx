/** What an ACP session used: turns, tool calls, and tokens, context and cost where the agent reported them. @module */
import type { JSX } from 'preact';
import type { Usage } from '../lib/acp-model.js';
import { tokensText } from './acp-transcript.js';

const int = (n: number): string => n.toLocaleString('en');

export function UsageFacts({ usage }: { usage: Usage }): JSX.Element {
  const tokens = tokensText(usage.tokens);
  return (
    <dl class="facts acp-usage" data-testid="acp-usage">
      <div>
        <dt>Turns</dt>
        <dd data-testid="acp-usage-turns">{usage.turns}</dd>
      </div>
      <div>
        <dt>Tool calls</dt>
        <dd data-testid="acp-usage-tools">{usage.toolCalls}</dd>
      </div>
      {tokens && (
        <div>
          <dt title="Summed over the turns that reported usage">Tokens</dt>
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
