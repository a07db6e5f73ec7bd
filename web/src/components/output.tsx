/**
 * The agent's output: the current run live (replayed from the start; after a dropped stream it
 * resumes from the last `seq` + 1, so nothing repeats) and the previous run on a second tab.
 * @module
 */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { BerthApiError, StreamBrokenError, type BerthClient } from '../../../src/api/index.js';
import { errorMessage, handleError, isAbort, isConnectionError } from '../berth.js';
import { backoffDelay, sleep } from '../lib/backoff.js';
import { AnsiView } from './ansi-view.js';

type StreamStatus = 'connecting' | 'live' | 'ended' | 'retrying' | 'unavailable';

export function Output(props: { client: BerthClient; id: string; runKey: string }): JSX.Element {
  const [tab, setTab] = useState<'current' | 'previous'>('current');
  return (
    <div class="output-panel">
      <div
        class="tabs"
        role="tablist"
        aria-label="Agent runs"
        onKeyDown={(e) => {
          if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
          const next = tab === 'current' ? 'previous' : 'current';
          setTab(next);
          document.getElementById(`tab-${next}`)?.focus();
        }}
      >
        <button type="button" role="tab" id="tab-current" tabIndex={tab === 'current' ? 0 : -1} aria-selected={tab === 'current'} aria-controls="output-current" onClick={() => setTab('current')}>
          Current run
        </button>
        <button
          type="button"
          role="tab"
          id="tab-previous"
          data-testid="output-previous"
          tabIndex={tab === 'previous' ? 0 : -1}
          aria-selected={tab === 'previous'}
          aria-controls="output-prev"
          onClick={() => setTab('previous')}
        >
          Previous run
        </button>
      </div>
      <div id="output-current" role="tabpanel" aria-labelledby="tab-current" hidden={tab !== 'current'}>
        <LogStream key={props.runKey} client={props.client} id={props.id} follow notStarted={props.runKey === 'none'} testid="output" />
      </div>
      {tab === 'previous' && (
        <div id="output-prev" role="tabpanel" aria-labelledby="tab-previous">
          <LogStream client={props.client} id={props.id} previous testid="output-previous-view" />
        </div>
      )}
    </div>
  );
}

function LogStream(props: { client: BerthClient; id: string; follow?: boolean; previous?: boolean; notStarted?: boolean; testid: string }): JSX.Element {
  const pre = useRef<HTMLPreElement>(null);
  const [status, setStatus] = useState<StreamStatus>('connecting');
  const [note, setNote] = useState<string | null>(null);
  const [empty, setEmpty] = useState(true);

  useEffect(() => {
    const view = new AnsiView(pre.current!);
    const ac = new AbortController();
    let last = -1;
    void (async () => {
      for (let attempt = 0; !ac.signal.aborted; ) {
        try {
          const opts = {
            signal: ac.signal,
            ...(props.follow ? { follow: true } : {}),
            ...(props.previous ? { previous: true } : {}),
            ...(last >= 0 ? { from: last + 1 } : {}),
          };
          setStatus(props.follow ? 'live' : 'connecting');
          for await (const chunk of props.client.logs(props.id, opts)) {
            if (chunk.seq <= last) continue; // already shown before the reconnect
            last = chunk.seq;
            attempt = 0;
            view.write(chunk.data);
            setEmpty(false);
          }
          if (ac.signal.aborted) return;
          // The client cannot tell a clean end from a dropped stream: a follow that ends while the
          // agent still runs broke off, so resume after the last chunk shown.
          if (props.follow && (await stillRunning(props.client, props.id))) throw new StreamBrokenError('the output stream ended early');
          setStatus('ended');
          return;
        } catch (err) {
          if (isAbort(err) || ac.signal.aborted) return;
          if (err instanceof BerthApiError && err.status !== 401) {
            setStatus('unavailable');
            setNote(err.message);
            return;
          }
          if (!isConnectionError(err)) {
            if (handleError(err) === 'api') {
              setStatus('unavailable');
              setNote(errorMessage(err));
            }
            return;
          }
          setStatus('retrying');
          try {
            await sleep(backoffDelay(attempt++), ac.signal);
          } catch {
            return;
          }
        }
      }
    })();
    return () => ac.abort();
  }, [props.client, props.id]);

  const label: Record<StreamStatus, string> = {
    connecting: 'Loading…',
    live: 'Live',
    ended: props.follow ? (props.notStarted ? 'The agent has not started yet' : 'The agent has exited') : 'End of the previous run',
    retrying: 'Connection lost — resuming where it stopped…',
    unavailable: 'No output',
  };
  return (
    <div class="log">
      <p class={`log-status status-${status}`} aria-live="polite">
        {label[status]}
        {note ? `: ${note}` : ''}
      </p>
      <pre class="terminal-text" ref={pre} data-testid={props.testid} tabIndex={0} aria-label="Agent output" />
      {empty && status !== 'connecting' && status !== 'retrying' && <p class="muted small">Nothing written yet.</p>}
    </div>
  );
}

async function stillRunning(client: BerthClient, id: string): Promise<boolean> {
  try {
    return (await client.get(id)).agentProcess?.status === 'running';
  } catch (err) {
    if (isConnectionError(err)) return true;
    return false;
  }
}
