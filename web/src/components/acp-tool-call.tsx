/** An ACP tool call: title, kind, status, the places it touches, its text output and the diffs of its edits. @module */
import type { JSX } from 'preact';
import type { DiffContent, ToolCall } from '../lib/acp-model.js';
import { lineDiff } from '../lib/line-diff.js';

export function ToolCallView({ call, testid = 'acp-tool' }: { call: ToolCall; testid?: string }): JSX.Element {
  return (
    <div class="acp-tool" data-testid={testid} data-tool-id={call.id} data-status={call.status}>
      <div class="acp-tool-head">
        <span class="acp-tool-title" data-testid="acp-tool-title">
          {call.title}
        </span>
        {call.kind && <span class="muted small">[{call.kind}]</span>}
        <span class={`badge tool-${call.status}`} data-testid="acp-tool-status">
          {call.status}
        </span>
      </div>
      {call.locations.length > 0 && (
        <ul class="acp-locations mono small" data-testid="acp-tool-locations">
          {call.locations.map((l) => (
            <li key={l}>{l}</li>
          ))}
        </ul>
      )}
      {call.texts.map((t, i) => (
        <pre key={i} class="acp-tool-text">
          {t}
        </pre>
      ))}
      {call.diffs.map((d, i) => (
        <DiffView key={`${d.path ?? ''}:${i}`} diff={d} />
      ))}
    </div>
  );
}

/** An edit as a line diff (`+` added, `-` removed, unchanged runs folded). */
function DiffView({ diff }: { diff: DiffContent }): JSX.Element {
  const lines = lineDiff(diff.oldText, diff.newText);
  return (
    <div class="acp-diff" data-testid="acp-diff">
      <div class="file-path mono small">
        {diff.path ?? '(no path)'}
        {diff.oldText === null && <span class="muted"> (new file)</span>}
      </div>
      <pre class="file-text diff-text">
        {lines.map((l, i) =>
          l.op === 'skip' ? (
            <span key={i} class="dl-line dl-meta">
              {`… ${l.count} unchanged line${l.count === 1 ? '' : 's'}`}
            </span>
          ) : (
            <span key={i} class={`dl-line${l.op === 'add' ? ' dl-add' : l.op === 'del' ? ' dl-del' : ''}`}>
              {`${l.op === 'add' ? '+' : l.op === 'del' ? '-' : ' '}${l.text}`}
            </span>
          ),
        )}
      </pre>
    </div>
  );
}
