/**
 * Per-key mutual exclusion with reference-counted entries: two operations on the same key run one
 * after the other, different keys run in parallel, and the map returns to empty when nobody holds
 * or waits for a key (spec §10). The one keyed lock of the controller, the executors and agentctl
 * (pure: the bundled agentctl imports it too).
 * @module
 */

interface Entry {
  refs: number;
  tail: Promise<void>;
}

export class KeyedLock {
  readonly #entries = new Map<string, Entry>();

  /** Number of keys currently held or waited for (0 when idle; tests rely on it). */
  get size(): number {
    return this.#entries.size;
  }

  /** Runs `fn` while holding the lock for `key`. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire(key);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Waits for the lock for `key`; the returned function releases it (idempotent). */
  async acquire(key: string): Promise<() => void> {
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = { refs: 0, tail: Promise.resolve() };
      this.#entries.set(key, entry);
    }
    entry.refs++;
    const previous = entry.tail;
    let unlock!: () => void;
    entry.tail = new Promise<void>((resolve) => (unlock = resolve));
    await previous;
    let released = false;
    const e = entry;
    return () => {
      if (released) return;
      released = true;
      e.refs--;
      if (e.refs === 0 && this.#entries.get(key) === e) this.#entries.delete(key);
      unlock();
    };
  }
}
