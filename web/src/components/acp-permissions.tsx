/**
 * The permission requests an ACP agent waits on, each with its tool call (title, kind, locations,
 * diffs) and the answers it offers: Allow / Deny, and Allow always / Deny always when the agent
 * offers them (`POST …/approve`). An answered request goes at once; the events confirm it.
 * @module
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { ApproveRequest, BerthClient } from '../../../src/api/index.js';
import { errorMessage, handleError } from '../berth.js';
import { requestToolCall, type Entry, type PermissionRequest } from '../lib/acp-model.js';
import { ToolCallView } from './acp-tool-call.js';

interface Props {
  client: BerthClient;
  id: string;
  pending: readonly PermissionRequest[];
  entries: readonly Entry[];
}

export function Permissions({ client, id, pending, entries }: Props): JSX.Element | null {
  const [answered, setAnswered] = useState<ReadonlySet<string>>(new Set());
  const shown = pending.filter((r) => !answered.has(r.id));
  if (shown.length === 0) return null;
  return (
    <section class="acp-permissions" aria-labelledby="h-permissions" data-testid="acp-permissions">
      <h3 id="h-permissions">
        Waiting for your approval <span class="badge waiting">{shown.length}</span>
      </h3>
      {shown.map((r) => (
        <PermissionCard key={r.id} client={client} id={id} request={r} entries={entries} onAnswered={() => setAnswered((s) => new Set([...s, r.id]))} />
      ))}
    </section>
  );
}

type Choice = { label: string; answer: Omit<ApproveRequest, 'requestId'>; testid: string; primary?: boolean };

function choices(request: PermissionRequest): Choice[] {
  const offers = (kind: string): boolean => request.options.some((o) => o.kind === kind);
  const out: Choice[] = [
    { label: 'Allow', answer: {}, testid: 'acp-allow', primary: true },
    { label: 'Deny', answer: { deny: true }, testid: 'acp-deny' },
  ];
  if (offers('allow_always')) out.splice(1, 0, { label: 'Allow always', answer: { always: true }, testid: 'acp-allow-always' });
  if (offers('reject_always')) out.push({ label: 'Deny always', answer: { deny: true, always: true }, testid: 'acp-deny-always' });
  return out;
}

function PermissionCard(props: { client: BerthClient; id: string; request: PermissionRequest; entries: readonly Entry[]; onAnswered: () => void }): JSX.Element {
  const { client, id, request } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const call = requestToolCall(request, props.entries);

  const answer = async (choice: Choice): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await client.acp.approve(id, { requestId: request.id, ...choice.answer });
      props.onAnswered();
    } catch (err) {
      if (handleError(err) === 'api') setError(`Could not answer: ${errorMessage(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="acp-permission" data-testid="acp-permission" data-request-id={request.id}>
      <ToolCallView call={call} testid="acp-permission-tool" />
      <div class="acp-permission-actions">
        {choices(request).map((c) => (
          <button key={c.testid} type="button" class={`button small${c.primary ? ' primary' : ''}`} data-testid={c.testid} disabled={busy} onClick={() => void answer(c)}>
            {c.label}
          </button>
        ))}
        <span class="muted small">
          {request.options.map((o) => o.name).join(' / ')} · request {request.id}
        </span>
      </div>
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
