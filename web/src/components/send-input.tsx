/** A line for the agent's stdin (what `berth send` does); its answer shows in the output above. @module */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { BerthClient } from '../../../src/api/index.js';
import { errorMessage, handleError } from '../berth.js';

export function SendInput(props: { client: BerthClient; id: string; enabled: boolean }): JSX.Element {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const send = async (eof: boolean): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await props.client.sendInput(props.id, eof && text === '' ? '' : `${text}\n`, { eof });
      setText('');
    } catch (err) {
      if (handleError(err) === 'api') setError(`Could not send: ${errorMessage(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="send-input"
      data-testid="send-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (text.trim() !== '') void send(false);
      }}
    >
      <label for="send-text">Send the agent a line</label>
      <div class="send-row">
        <input
          id="send-text"
          data-testid="send-input"
          type="text"
          autocomplete="off"
          value={text}
          disabled={!props.enabled || busy}
          placeholder={props.enabled ? 'e.g. also fix the tests' : 'the agent is not running'}
          onInput={(e) => setText((e.target as HTMLInputElement).value)}
        />
        <button type="submit" data-testid="send-submit" disabled={!props.enabled || busy || text.trim() === ''}>
          Send
        </button>
        <button type="button" data-testid="send-eof" title="Close the agent's input (end of file)" disabled={!props.enabled || busy} onClick={() => void send(true)}>
          End input
        </button>
      </div>
      {error && (
        <p class="notice error" role="alert" data-testid="send-error">
          {error}
        </p>
      )}
    </form>
  );
}
