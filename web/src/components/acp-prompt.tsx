/** A new turn for an ACP agent (`POST …/input`: each send is a turn), and Cancel while one runs. @module */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { BerthClient } from '../../../src/api/index.js';
import { errorMessage, handleError } from '../berth.js';

export function PromptBox(props: { client: BerthClient; id: string; enabled: boolean; turnRunning: boolean }): JSX.Element {
  const { client, id, enabled, turnRunning } = props;
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const run = async (what: string, fn: () => Promise<void>): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      if (handleError(err) === 'api') setError(`Could not ${what}: ${errorMessage(err)}`);
    } finally {
      setBusy(false);
    }
  };
  const send = (): Promise<void> =>
    run('send', async () => {
      await client.sendInput(id, text);
      setText('');
    });

  const canSend = enabled && !busy && !turnRunning && text.trim() !== '';
  return (
    <form
      class="send-input acp-prompt-form"
      data-testid="acp-prompt-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (canSend) void send();
      }}
    >
      <label for="acp-prompt-text">Your next message to the agent</label>
      <div class="send-row">
        <textarea
          id="acp-prompt-text"
          data-testid="acp-prompt"
          rows={2}
          value={text}
          disabled={!enabled || busy}
          placeholder={!enabled ? 'the agent is not running' : turnRunning ? 'the agent is working on a turn (Cancel ends it)' : 'e.g. now add a test'}
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && canSend) void send();
          }}
        />
        <button type="submit" class="button primary" data-testid="acp-send" disabled={!canSend}>
          Send
        </button>
        {turnRunning && (
          <button type="button" class="button danger" data-testid="acp-cancel" disabled={!enabled || busy} onClick={() => void run('cancel the turn', () => client.acp.cancel(id))}>
            Cancel turn
          </button>
        )}
      </div>
      {error && (
        <p class="notice error" role="alert" data-testid="acp-prompt-error">
          {error}
        </p>
      )}
    </form>
  );
}
