/**
 * The typed events of an ACP session's agent, followed: pages of `GET …/agent-events` read from
 * the start, then long-polled from `next` while the agent runs (each request waits until there is
 * a new event, the agent exits, or WAIT_MS pass). Ends when the page says `complete` (the agent
 * exited and everything was read). After a failed request it asks again after a short backoff.
 * @module
 */
import { useEffect, useState } from 'preact/hooks';
import { BerthApiError, MAX_AGENT_EVENTS_WAIT_MS, type AgentEvent, type AgentEventPage, type BerthClient } from '../../../src/api/index.js';
import { errorMessage, handleError, isAbort } from '../berth.js';
import { backoffDelay, sleep } from '../lib/backoff.js';

/** How long one request may wait for a new event (the server answers sooner when there is one). */
const WAIT_MS = MAX_AGENT_EVENTS_WAIT_MS;
/** The longest pause before asking again after a failed request. */
const MAX_BACKOFF_MS = 8_000;
/**
 * An empty page sooner than this means the server did not wait (one without long-polling):
 * pause that long before asking again rather than asking in a tight loop.
 */
const NO_WAIT_PAUSE_MS = 1_000;

interface AgentEventsFeed {
  events: AgentEvent[];
  status: 'loading' | 'live' | 'complete' | 'error';
  error: string | null;
  /** agentctl had dropped some earlier events (its buffer is bounded) before they were read. */
  dropped: boolean;
}

const INITIAL: AgentEventsFeed = { events: [], status: 'loading', error: null, dropped: false };

/** Whether asking again may succeed: a timeout, or an error of the server or the agent's daemon (not a 4xx). */
function retryable(err: unknown): boolean {
  if (err instanceof BerthApiError) return err.status >= 500 || err.status === 408 || err.status === 429;
  return isAbort(err); // a request that timed out (the feed's own abort is checked first)
}

/**
 * `key` changes (a new agent process, a reconnect) start the feed afresh from the first event;
 * nothing is read while `active` is false (no live agent to ask).
 */
export function useAgentEvents(client: BerthClient, id: string, key: string, active: boolean): AgentEventsFeed {
  const [feed, setFeed] = useState<AgentEventsFeed>(INITIAL);
  useEffect(() => {
    setFeed(INITIAL);
    if (!active) return;
    const ac = new AbortController();
    let from = 0;
    let events: AgentEvent[] = [];
    const apply = (page: AgentEventPage): void => {
      const dropped = page.firstAvailable > from;
      if (page.events.length > 0 || dropped) events = [...events, ...page.events];
      from = page.next;
      setFeed((f) => ({ events, status: page.complete ? 'complete' : 'live', error: null, dropped: f.dropped || dropped }));
    };
    void (async () => {
      for (let failures = 0, first = true; ; first = false) {
        try {
          const asked = Date.now();
          // the first page answers at once; later ones wait for something new
          const page = await client.acp.events(id, { from, signal: ac.signal, ...(first ? {} : { wait: WAIT_MS }) });
          if (ac.signal.aborted) return;
          failures = 0;
          apply(page);
          if (page.complete) return;
          if (page.events.length === 0 && Date.now() - asked < NO_WAIT_PAUSE_MS) await sleep(NO_WAIT_PAUSE_MS, ac.signal);
        } catch (err) {
          if (ac.signal.aborted) return;
          if (!retryable(err)) {
            if (handleError(err) === 'api') setFeed((f) => ({ ...f, status: 'error', error: errorMessage(err) }));
            return;
          }
          setFeed((f) => ({ ...f, status: 'error', error: errorMessage(err) }));
          try {
            await sleep(backoffDelay(failures++, MAX_BACKOFF_MS), ac.signal);
          } catch {
            return;
          }
        }
      }
    })();
    return () => ac.abort();
  }, [client, id, key, active]);
  return feed;
}
