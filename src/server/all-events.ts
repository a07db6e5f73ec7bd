/**
 * Session events as Server-Sent Events (`event: <type>\ndata: <json>`), for one session
 * (`…/sessions/{id}/events`) or all of them (`GET /api/v1/events`): a snapshot first, then live
 * events, with keep-alive pings until the client leaves. For all sessions the snapshot is each
 * session's state; a new session starts with its `state: launching`, a removed one ends with `removed`.
 * @module
 */
import type { ServerResponse } from 'node:http';
import type { SessionEvent, SessionService } from '../controller/index.js';

interface SseOptions {
  keepAliveMs: number;
  /** Only this session's events (absent: every session's). */
  sessionId?: string;
  /** The events that describe now; read after subscribing, so nothing in between is lost. */
  snapshot: () => Promise<SessionEvent[]>;
}

/** Events a client may leave unread before its stream is cut. */
const MAX_UNREAD_EVENT_BYTES = 4 << 20;

export async function streamSessionEvents(service: SessionService, res: ServerResponse, opts: SseOptions): Promise<void> {
  // Watch for the client leaving from the start: it may go while the snapshot is being read.
  const gone = new AbortController();
  if (res.destroyed) gone.abort();
  else res.once('close', () => gone.abort());
  const buffered: SessionEvent[] = [];
  let live = false;
  const write = (e: SessionEvent): void => {
    if (res.destroyed || res.writableEnded) return;
    // A client that stopped reading is cut, not buffered for: on reconnecting it gets a fresh snapshot.
    if (res.writableLength > MAX_UNREAD_EVENT_BYTES) {
      res.destroy();
      return;
    }
    res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  };
  // Subscribed before the snapshot is read; buffered events are replayed after it (one may then
  // appear twice, in order — harmless).
  const unsubscribe = service.subscribe(
    (e) => {
      if (live) write(e);
      else buffered.push(e);
    },
    opts.sessionId !== undefined ? { sessionId: opts.sessionId } : undefined,
  );
  try {
    const snapshot = await opts.snapshot();
    // x-accel-buffering: nginx (an Ingress) passes each event on at once even where proxy buffering is on.
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.flushHeaders();
    for (const e of snapshot) write(e);
    for (const e of buffered) write(e);
    live = true;
  } catch (err) {
    unsubscribe();
    throw err;
  }
  if (gone.signal.aborted) {
    unsubscribe();
    return;
  }
  const ping = setInterval(() => {
    if (!res.destroyed && !res.writableEnded && !res.writableNeedDrain) res.write(': ping\n\n');
  }, opts.keepAliveMs);
  ping.unref();
  await new Promise<void>((resolve) => {
    gone.signal.addEventListener(
      'abort',
      () => {
        clearInterval(ping);
        unsubscribe();
        resolve();
      },
      { once: true },
    );
  });
}

/** `GET /api/v1/events`: every session's state, then every session's events. */
export function streamAllEvents(service: SessionService, res: ServerResponse, keepAliveMs: number): Promise<void> {
  return streamSessionEvents(service, res, {
    keepAliveMs,
    snapshot: async () => {
      const at = new Date().toISOString();
      return (await service.list()).map((s): SessionEvent => ({ type: 'state', sessionId: s.id, state: s.state, error: s.error, at }));
    },
  });
}
