/**
 * The conversation with an ACP agent on its session's page: what it used, the permission requests
 * it waits on, the transcript, and the box for the next turn (with Cancel while one runs). Fed by
 * the agent's typed events (`useAgentEvents`), folded by lib/acp-model.ts.
 * @module
 */
import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import type { BerthClient, SessionView } from '../../../src/api/index.js';
import { foldEvents, shownUsage } from '../lib/acp-model.js';
import { Permissions } from './acp-permissions.js';
import { PromptBox } from './acp-prompt.js';
import { Transcript } from './acp-transcript.js';
import { UsageFacts } from './acp-usage.js';
import { useAgentEvents } from './use-agent-events.js';

export function AcpPanel({ client, session: s, ep }: { client: BerthClient; session: SessionView; ep: number }): JSX.Element {
  const running = s.state === 'ready' && s.agentProcess?.status === 'running';
  const readable = s.state === 'ready' && s.agentProcess !== null;
  const feed = useAgentEvents(client, s.id, `${s.agentProcess?.id ?? 'none'}:${ep}`, readable);
  const model = useMemo(() => foldEvents(feed.events), [feed.events]);
  const live = running && feed.status !== 'complete';
  const turnRunning = live && model.turnRunning;

  return (
    <div class="acp-panel" data-testid="acp-panel" data-feed={feed.status} data-turn-running={String(turnRunning)}>
      <UsageFacts usage={shownUsage(s.agentProcess?.usage, model.usage, feed.dropped)} />
      {!readable && (
        <p class="muted">
          The conversation shows while the session runs
          {s.state === 'stopped' ? ': resume it to see it' : s.state === 'suspended' ? ': it was suspended while idle, and a prompt sent below wakes it' : ''}.
        </p>
      )}
      {feed.error && (
        <p class="notice error" role="alert" data-testid="acp-feed-error">
          Could not read the agent's events: {feed.error}
        </p>
      )}
      {feed.dropped && <p class="muted small">Earlier events were dropped before they could be shown.</p>}
      {live && <Permissions key={s.agentProcess?.id} client={client} id={s.id} pending={model.pending} entries={model.entries} />}
      {readable && feed.status !== 'loading' && <Transcript entries={model.entries} />}
      {feed.status === 'loading' && readable && <p class="muted loading">Loading the conversation…</p>}
      {turnRunning && model.pending.length === 0 && (
        <p class="muted small acp-working" data-testid="acp-working">
          The agent is working…
        </p>
      )}
      {feed.status === 'complete' && <p class="muted small">The agent has exited.</p>}
      <PromptBox client={client} id={s.id} enabled={live || s.state === 'suspended'} turnRunning={turnRunning} />
    </div>
  );
}
