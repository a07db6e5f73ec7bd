/**
 * The in-process event bus of the controller: live listeners plus a bounded replay buffer per
 * session, so a subscriber that arrives late still sees the current launch's stages.
 * @module
 */
import type { SessionEvent } from './service.js';

/** Events kept per session for late subscribers. */
export const REPLAY_LIMIT = 200;

interface Subscription {
  listener: (event: SessionEvent) => void;
  sessionId: string | undefined;
}

export class SessionEvents {
  readonly #subs = new Set<Subscription>();
  readonly #replay = new Map<string, SessionEvent[]>();
  readonly #onListenerError: (err: unknown) => void;

  constructor(onListenerError: (err: unknown) => void = () => undefined) {
    this.#onListenerError = onListenerError;
  }

  emit(event: SessionEvent): void {
    const buf = this.#replay.get(event.sessionId) ?? [];
    buf.push(event);
    if (buf.length > REPLAY_LIMIT) buf.splice(0, buf.length - REPLAY_LIMIT);
    this.#replay.set(event.sessionId, buf);
    for (const sub of [...this.#subs]) {
      if (sub.sessionId !== undefined && sub.sessionId !== event.sessionId) continue;
      this.#deliver(sub, event);
    }
  }

  /** Starts a new launch: older events of the session are no longer replayed. */
  resetReplay(sessionId: string): void {
    this.#replay.delete(sessionId);
  }

  /** Forgets a removed session. */
  forget(sessionId: string): void {
    this.#replay.delete(sessionId);
  }

  /** Subscribes; with a session filter, first replays that session's buffered events. */
  subscribe(listener: (event: SessionEvent) => void, filter: { sessionId?: string } = {}): () => void {
    const sub: Subscription = { listener, sessionId: filter.sessionId };
    if (filter.sessionId !== undefined) {
      for (const event of this.#replay.get(filter.sessionId) ?? []) this.#deliver(sub, event);
    }
    this.#subs.add(sub);
    return () => {
      this.#subs.delete(sub);
    };
  }

  get listenerCount(): number {
    return this.#subs.size;
  }

  #deliver(sub: Subscription, event: SessionEvent): void {
    try {
      sub.listener(event);
    } catch (err) {
      this.#onListenerError(err);
    }
  }
}
