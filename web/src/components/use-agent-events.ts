/**
 * The typed events of an ACP session's agent, followed: pages of `GET …/agent-events` read from
 * the start, then polled from `next` while the agent runs (the route does not stream). Ends when
 * the page says `complete` (the agent exited and everything was read).
 * @module
 */
import { useEffect, useState } from 'preact/hooks';
import type { AgentEvent, BerthClient } from '../../../src/api/index.js';
import { errorMessage, handleError } from '../berth.js';
import { sleep } from '../lib/backoff.js';

/** How long to wait before asking again when a page brought nothing new. */
const POLL_MS = 700;

interface AgentEventsFeed {
  events: AgentEvent[];
  status: 'loading' | 'live' | 'complete' | 'error';
  error: string | null;
  /** agentctl had dropped some earlier events (its buffer is bounded) before they were read. */
  dropped: boolean;
}

const INITIAL: AgentEventsFeed = { events: [], status: 'loading', error: null, dropped: false };

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
    void (async () => {
      let from = 0;
      let events: AgentEvent[] = [];
      try {
        for (;;) {
          const page = await client.acp.events(id, { from, signal: ac.signal });
          if (ac.signal.aborted) return;
          const dropped = page.firstAvailable > from;
          if (page.events.length > 0 || dropped) events = [...events, ...page.events];
          from = page.next;
          setFeed((f) => ({ events, status: page.complete ? 'complete' : 'live', error: null, dropped: f.dropped || dropped }));
          if (page.complete) return;
          if (page.events.length === 0) await sleep(POLL_MS, ac.signal);
        }
      } catch (err) {
        if (handleError(err) === 'api') setFeed((f) => ({ ...f, status: 'error', error: errorMessage(err) }));
      }
    })();
    return () => ac.abort();
  }, [client, id, key, active]);
  return feed;
}
