import { describe, expect, it } from 'vitest';
import { REPLAY_LIMIT, SessionEvents } from './events.js';
import type { SessionEvent } from './service.js';

const diag = (sessionId: string, n: number): SessionEvent => ({ type: 'diagnostic', sessionId, reason: 'r', message: String(n), at: 'x' });

describe('SessionEvents', () => {
  it('replays the session buffer to a late filtered subscriber, then delivers live events', () => {
    const bus = new SessionEvents();
    bus.emit(diag('a', 1));
    bus.emit(diag('b', 2));
    const seen: string[] = [];
    const off = bus.subscribe((e) => seen.push(`${e.sessionId}:${(e as { message: string }).message}`), { sessionId: 'a' });
    bus.emit(diag('a', 3));
    bus.emit(diag('b', 4));
    off();
    bus.emit(diag('a', 5));
    expect(seen).toEqual(['a:1', 'a:3']);
    expect(bus.listenerCount).toBe(0);
  });

  it('keeps at most REPLAY_LIMIT events per session and drops them on reset', () => {
    const bus = new SessionEvents();
    for (let i = 0; i < REPLAY_LIMIT + 10; i++) bus.emit(diag('a', i));
    const seen: SessionEvent[] = [];
    bus.subscribe((e) => seen.push(e), { sessionId: 'a' })();
    expect(seen).toHaveLength(REPLAY_LIMIT);
    expect((seen[0] as { message: string }).message).toBe('10');
    bus.resetReplay('a');
    const after: SessionEvent[] = [];
    bus.subscribe((e) => after.push(e), { sessionId: 'a' })();
    expect(after).toEqual([]);
  });

  it('isolates a throwing listener', () => {
    const errors: unknown[] = [];
    const bus = new SessionEvents((e) => errors.push(e));
    const seen: SessionEvent[] = [];
    bus.subscribe(() => {
      throw new Error('bad listener');
    });
    bus.subscribe((e) => seen.push(e));
    bus.emit(diag('a', 1));
    expect(seen).toHaveLength(1);
    expect(errors).toHaveLength(1);
  });
});
