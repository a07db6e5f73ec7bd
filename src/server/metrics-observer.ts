/**
 * Feeds the metrics from the controller's live events (one subscription, no calls inside the
 * controller): an ended stage is one observation of the stage histogram, a `state` event moves a
 * session between the state gauge's series, and diagnostics count replacements, agent restarts and
 * reconnects. Events name only the session: its executor is read once per session (from the first
 * listing, or `get` for a session that appears later), and that session's events wait for it.
 * @module
 */
import type { SessionEvent, SessionService } from '../controller/index.js';
import type { ServerMetrics } from './metrics.js';

type ObservedService = Pick<SessionService, 'list' | 'get' | 'subscribe'>;

interface Tracked {
  executor: string;
  state: string;
}

interface SessionsObserver {
  /** Settles once the sessions that existed at the start are counted. */
  readonly seeded: Promise<void>;
  /** Unsubscribes. */
  close(): void;
}

/** Starts feeding `metrics` from `service`'s events. Never throws; a failed read is passed to `onError`. */
export function observeSessions(service: ObservedService, metrics: ServerMetrics, onError: (err: unknown) => void = () => undefined): SessionsObserver {
  const sessions = new Map<string, Tracked>();
  /** Events of sessions whose executor is being read, in order. */
  const waiting = new Map<string, SessionEvent[]>();
  let closed = false;

  const recount = (): void => {
    const counts = new Map<string, number>();
    for (const { state } of sessions.values()) counts.set(state, (counts.get(state) ?? 0) + 1);
    metrics.setSessionCounts(counts);
  };

  const apply = (t: Tracked, event: SessionEvent): void => {
    if (event.type === 'state') {
      t.state = event.state;
      recount();
    } else if (event.type === 'stage') {
      const { name, status, durationMs } = event.stage;
      if ((status === 'succeeded' || status === 'failed') && durationMs !== null) metrics.observeStage(t.executor, name, status, durationMs / 1000);
    } else if (event.type === 'diagnostic') {
      metrics.countDiagnostic(t.executor, event.reason);
    }
  };

  const lookUp = (id: string): void => {
    service.get(id).then(
      (view) => {
        const queued = waiting.get(id);
        waiting.delete(id);
        // removed meanwhile (or closed): nothing to count
        if (closed || queued === undefined) return;
        const t = sessions.get(id) ?? { executor: view.executor, state: view.state };
        sessions.set(id, t);
        for (const event of queued) apply(t, event);
        recount();
      },
      (err: unknown) => {
        waiting.delete(id);
        // removed meanwhile: nothing to count
        if ((err as Error | undefined)?.name !== 'SessionNotFoundError') onError(err);
      },
    );
  };

  const onEvent = (event: SessionEvent): void => {
    const id = event.sessionId;
    if (event.type === 'removed') {
      waiting.delete(id);
      if (sessions.delete(id)) recount();
      return;
    }
    const t = sessions.get(id);
    if (t) return apply(t, event);
    const queued = waiting.get(id);
    if (queued) return void queued.push(event);
    waiting.set(id, [event]);
    lookUp(id);
  };

  const unsubscribe = service.subscribe(onEvent);
  const seeded = service.list().then(
    (views) => {
      for (const v of views) if (!sessions.has(v.id) && !waiting.has(v.id)) sessions.set(v.id, { executor: v.executor, state: v.state });
      recount();
    },
    (err: unknown) => onError(err),
  );
  return {
    seeded,
    close: () => {
      closed = true;
      unsubscribe();
    },
  };
}
