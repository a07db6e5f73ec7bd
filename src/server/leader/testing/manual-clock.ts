/**
 * A hand-driven time source for leader election tests: every elector gets a LeaderClock over the
 * same monotonic time (each with its own wall-clock offset, to show wall clocks are never trusted);
 * advance() fires due timers in order and lets the promise chains they start settle.
 * @module
 */
import type { LeaderClock } from '../options.js';

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/** Lets every queued promise continuation run (fake ports answer with resolved promises). */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class ManualTime {
  #now = 0;
  #seq = 0;
  #timers: Timer[] = [];
  /** Called after each fired timer has settled (invariant checks). */
  onStep: (() => void) | undefined;

  get now(): number {
    return this.#now;
  }

  /** A clock over this time whose wall clock is off by `wallOffsetMs` (another machine's clock). */
  clock(wallOffsetMs = 0): LeaderClock {
    return {
      now: () => this.#now,
      wallNow: () => new Date(Date.UTC(2026, 0, 1) + this.#now + wallOffsetMs),
      setTimeout: (fn, ms) => {
        const timer = { id: ++this.#seq, at: this.#now + Math.max(0, ms), fn };
        this.#timers.push(timer);
        return timer.id;
      },
      clearTimeout: (handle) => {
        this.#timers = this.#timers.filter((t) => t.id !== handle);
      },
    };
  }

  /** Moves time forward by `ms`, firing every timer due on the way (in order of due time, then of creation). */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    await settle();
    for (;;) {
      const next = this.#timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (next === undefined) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = next.at;
      next.fn();
      await settle();
      this.onStep?.();
    }
    this.#now = end;
    await settle();
  }

  /** Advances in steps of `stepMs` until `predicate` holds; the time it took, or throws after `limitMs`. */
  async until(predicate: () => boolean, limitMs: number, stepMs = 10): Promise<number> {
    const start = this.#now;
    while (!predicate()) {
      if (this.#now - start >= limitMs) throw new Error(`condition not met within ${limitMs} ms of fake time`);
      await this.advance(stepMs);
    }
    return this.#now - start;
  }
}
