/** Stop / resume / remove, enabled per state; remove asks first, naming what will be deleted. @module */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { BerthClient } from '../../../src/api/api-client.js';
import type { SessionView } from '../../../src/controller/service.js';
import { errorBanner, errorMessage, handleError, launchOptions } from '../berth.js';
import { sessionTitle } from '../lib/format.js';
import { navigate } from '../router.js';
import { ConfirmDialog } from './confirm-dialog.js';

export function canStop(s: SessionView): boolean {
  return s.state === 'ready' || s.state === 'launching';
}
export function canResume(s: SessionView): boolean {
  return s.state === 'stopped' || s.state === 'failed';
}
export function canRemove(s: SessionView): boolean {
  return s.state !== 'removing';
}

export function SessionActions(props: { client: BerthClient; session: SessionView; onChanged: (s: SessionView) => void }): JSX.Element {
  const s = props.session;
  const [busy, setBusy] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [executorType, setExecutorType] = useState<string | null>(null);

  useEffect(() => {
    launchOptions(props.client)
      .then((o) => setExecutorType(o.targets.find((t) => t.name === s.executor)?.type ?? null))
      .catch(() => setExecutorType(null));
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
          <p>{removalText(s, executorType)}</p>
          <p class="muted small">This cannot be undone. Push or copy anything you want to keep first.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}

/** What `remove` deletes, in words, by executor type. */
export function removalText(s: SessionView, executorType: string | null): string {
  if (executorType === 'kubernetes') {
    return `This stops the agent and deletes the session's Pod and its PVC (the workspace volume${s.workspacePath ? ` mounted at ${s.workspacePath}` : ''}, with every file in it) on the Kubernetes executor "${s.executor}".`;
  }
  const where = s.workspacePath ? ` at ${s.workspacePath}` : '';
  return `This stops the agent and deletes the session's workspace directory${where} (executor "${s.executor}"), with every uncommitted change in it.`;
}
