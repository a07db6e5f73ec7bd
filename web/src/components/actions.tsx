/** Stop / resume / remove, enabled per state; remove asks first, naming what will be deleted. @module */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { BerthClient, SessionView } from '../../../src/api/index.js';
import { errorBanner, errorMessage, handleError, launchOptions } from '../berth.js';
import { sessionTitle } from '../lib/format.js';
import { navigate } from '../router.js';
import { ConfirmDialog } from './confirm-dialog.js';

function canStop(s: SessionView): boolean {
  return s.state === 'ready' || s.state === 'launching' || s.state === 'suspended';
}
function canResume(s: SessionView): boolean {
  return s.state === 'stopped' || s.state === 'suspended' || s.state === 'failed';
}
function canRemove(s: SessionView): boolean {
  return s.state !== 'removing';
}

export function SessionActions(props: { client: BerthClient; session: SessionView; onChanged: (s: SessionView) => void }): JSX.Element {
  const s = props.session;
  const [busy, setBusy] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [removes, setRemoves] = useState<string | null>(null);

  useEffect(() => {
    launchOptions(props.client)
      .then((o) => setRemoves(o.targets.find((t) => t.name === s.executor)?.capabilities.removes ?? null))
      .catch(() => setRemoves(null));
  }, [props.client, s.executor]);

  const act = async (what: string, fn: () => Promise<SessionView | void>): Promise<void> => {
    setBusy(what);
    errorBanner.set(null);
    try {
      const r = await fn();
      if (r) props.onChanged(r);
    } catch (err) {
      if (handleError(err) === 'api') errorBanner.set(`Could not ${what} ${sessionTitle(s)}: ${errorMessage(err)}`);
    } finally {
      setBusy(null);
    }
  };

  const remove = async (): Promise<void> => {
    setConfirming(false);
    await act('remove', async () => {
      await props.client.remove(s.id);
      navigate('/');
    });
  };

  return (
    <div class="session-actions">
      <button type="button" class="button" data-testid="action-stop" disabled={!canStop(s) || busy !== null} onClick={() => void act('stop', () => props.client.stop(s.id))}>
        {busy === 'stop' ? 'Stopping…' : 'Stop'}
      </button>
      <button type="button" class="button" data-testid="action-resume" disabled={!canResume(s) || busy !== null} onClick={() => void act('resume', () => props.client.resume(s.id))}>
        {busy === 'resume' ? 'Resuming…' : 'Resume'}
      </button>
      <button type="button" class="button danger" data-testid="action-remove" disabled={!canRemove(s) || busy !== null} onClick={() => setConfirming(true)}>
        {busy === 'remove' ? 'Removing…' : 'Remove'}
      </button>
      {confirming && (
        <ConfirmDialog title={`Remove ${sessionTitle(s)}?`} confirmLabel="Remove" danger onConfirm={() => void remove()} onCancel={() => setConfirming(false)}>
          <p>{removalText(s, removes)}</p>
          <p class="muted small">This cannot be undone. Push or copy anything you want to keep first.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}

/** What `remove` deletes, in the words the session's executor declares (its `removes` capability). */
function removalText(s: SessionView, removes: string | null): string {
  const where = s.workspacePath ? ` The workspace is at ${s.workspacePath}.` : '';
  return `This stops the agent and deletes ${removes ?? "the session's workspace"} (executor "${s.executor}").${where}`;
}
