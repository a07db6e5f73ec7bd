/**
 * The transcript of an ACP session: one block per entry of the folded events (lib/acp-model.ts).
 * A continued conversation starts with the earlier one as its agent restored it, under a heading,
 * then a line saying how this run's conversation opened.
 * @module
 */
import type { JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { Entry, ResumeInfo, Tokens } from '../lib/acp-model.js';
import { ToolCallView } from './acp-tool-call.js';

/** `in 12 · out 42 · total 54`, or null when nothing is known. */
export function tokensText(t: Tokens | null): string | null {
  if (t === null) return null;
  const parts = [t.input !== null ? `in ${t.input}` : null, t.output !== null ? `out ${t.output}` : null, t.total !== null ? `total ${t.total}` : null];
  return parts.filter(Boolean).join(' · ');
}

export function Transcript({ entries }: { entries: readonly Entry[] }): JSX.Element {
  const box = useRef<HTMLOListElement>(null);
  const stick = useRef(true);
  useEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  });
  if (entries.length === 0) return <p class="muted">No events yet.</p>;
  return (
    <ol
      class="acp-transcript"
      ref={box}
      data-testid="acp-transcript"
      onScroll={(e) => {
        const el = e.currentTarget;
        stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }}
    >
      {entries.map((e) => (
        <li
          key={`${e.kind}:${e.seq}`}
          class={`acp-entry acp-${e.kind}${e.replay ? ' acp-replayed' : ''}`}
          data-testid={`acp-entry-${e.kind}`}
          data-replay={e.replay ? 'true' : undefined}
        >
          <EntryView entry={e} />
        </li>
      ))}
    </ol>
  );
}

function EntryView({ entry: e }: { entry: Entry }): JSX.Element {
  switch (e.kind) {
    case 'session':
      return e.resume ? <ResumeLine resume={e.resume} agent={e.agent} /> : <span class="muted small">Conversation opened{e.agent ? ` with ${e.agent}` : ''}</span>;
    case 'history':
      return (
        <h3 class="acp-history-heading" data-testid="acp-history">
          Earlier conversation (restored by the agent)
        </h3>
      );
    case 'prompt':
      return (
        <>
          <span class="acp-who">You · turn {e.turn}</span>
          <div class="acp-text">{e.text}</div>
        </>
      );
    case 'message':
      return (
        <>
          <span class="acp-who">{e.role === 'agent' ? 'Agent' : e.role === 'user' ? 'You' : 'Thinking'}</span>
          <div class={`acp-text${e.role === 'thought' ? ' muted' : ''}`}>{e.text}</div>
        </>
      );
    case 'tool':
      return <ToolCallView call={e.call} />;
    case 'plan':
      return (
        <>
          <span class="acp-who">Plan</span>
          <ul class="acp-plan">
            {e.entries.map((p, i) => (
              <li key={i} class={`plan-${p.status}`} data-status={p.status}>
                <span class="plan-mark" aria-hidden="true">
                  {p.status === 'completed' ? '✓' : p.status === 'in_progress' ? '▸' : '○'}
                </span>{' '}
                {p.content} <span class="muted small">({p.status.replace('_', ' ')})</span>
              </li>
            ))}
          </ul>
        </>
      );
    case 'permission':
      return (
        <span class="small">
          Permission asked: <strong>{e.title}</strong> — {e.answer === null ? <em>waiting for an answer</em> : e.answer}
        </span>
      );
    case 'turn_end': {
      const tokens = tokensText(e.tokens);
      return (
        <span class="muted small" data-stop-reason={e.stopReason}>
          Turn {e.turn} ended: {e.stopReason.replace('_', ' ')}
          {tokens ? ` (tokens: ${tokens})` : ''}
        </span>
      );
    }
    case 'error':
      return (
        <span class="acp-error" role="alert">
          Error{e.turn !== null ? ` in turn ${e.turn}` : ''}: {e.message}
        </span>
      );
  }
}

/** How a run continuing an earlier one's conversation opened it: restored, or a new one and why. */
function ResumeLine({ resume: r, agent }: { resume: ResumeInfo; agent: string | null }): JSX.Element {
  const by = agent ? ` (${agent})` : '';
  return (
    <span class={`small${r.loaded ? ' muted' : ' acp-resume-new'}`} data-testid="acp-resume" data-loaded={String(r.loaded)}>
      {r.loaded ? `Conversation of ${r.from} continued${by}` : `New conversation: ${r.reason ?? `the conversation of ${r.from} was not restored`}${by}`}
    </span>
  );
}
