/**
 * Ready sessions heal without a command: while a session is ready its instance is watched through
 * the executor (Kubernetes: one Pod watch per namespace), and trouble (the Pod deleted, failed, or
 * its container restarted) runs the same refresh/replacement path a command would, under the
 * session's lock. Watches end when the session leaves `ready` and on close(); a heal that fails is
 * retried a bounded number of times with a backoff, then left to the next command.
 * @module
 */
import { errorMessage } from '../shared/errors.js';
import { sanitize } from '../shared/sanitize.js';
import { diagnostic, type ManagerContext } from './context.js';
import { SessionLaunch } from './launch.js';
import { sessionIdentity } from '../executors/launch-kit/index.js';
import type { SessionEvent } from './service.js';
import type { RuntimeRecord } from '../inventory/index.js';

const MAX_HEAL_ATTEMPTS = 5;
const FIRST_RETRY_MS = 2_000;
const MAX_RETRY_MS = 60_000;

interface Tracked {
  key: string;
  stop: () => void;
}

export class SelfHeal {
  readonly #ctx: ManagerContext;
  readonly #shutdown: AbortSignal;
  readonly #watches = new Map<string, Tracked>();
  readonly #retries = new Map<string, NodeJS.Timeout>();
  /** What the executor last reported wrong with each session being healed (named in a lost agent's reason). */
  readonly #causes = new Map<string, { reason: string; message: string }>();
  readonly #unsubscribe: () => void;
  readonly #inflight = new Set<Promise<void>>();
  /** Bumped by every track and untrack of a session: a track whose store read was overtaken gives up. */
  readonly #turns = new Map<string, number>();
  #closed = false;

  constructor(ctx: ManagerContext, shutdown: AbortSignal) {
    this.#ctx = ctx;
    this.#shutdown = shutdown;
    this.#unsubscribe = ctx.events.subscribe((e) => this.#onEvent(e));
  }

  /** Sessions being watched (for tests and diagnostics). */
  get watched(): readonly string[] {
    return [...this.#watches.keys()];
  }

  /** Ends every watch and retry; resolves when the heals in flight have ended. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe();
    for (const id of [...this.#watches.keys(), ...this.#retries.keys()]) this.#untrack(id);
    await Promise.allSettled([...this.#inflight]);
  }

  #onEvent(e: SessionEvent): void {
    if (e.type === 'state') {
      if (e.state === 'ready') this.#track(e.sessionId);
      else this.#untrack(e.sessionId);
    } else if (e.type === 'removed') {
      this.#untrack(e.sessionId);
      this.#turns.delete(e.sessionId);
    }
  }

  /** Watches the session's recorded instance (again, when its record changed). */
  #track(id: string): void {
    const turn = this.#bump(id);
    const p = this.#ctx.store.getRuntime(id).then(
      (row) => {
        if (this.#turns.get(id) === turn) this.#watch(id, row);
      },
      (err: unknown) => this.#ctx.log.warn({ session: id, err: sanitize(errorMessage(err)) }, 'cannot read the runtime row to watch the instance; it heals on the next command'),
    );
    this.#inflight.add(p);
    void p.finally(() => this.#inflight.delete(p));
  }

  #bump(id: string): number {
    const turn = (this.#turns.get(id) ?? 0) + 1;
    this.#turns.set(id, turn);
    return turn;
  }

  #watch(id: string, row: RuntimeRecord | null): void {
    const executor = row ? this.#ctx.executors.get(row.executor) : undefined;
    if (this.#closed || !row || row.state !== 'ready' || !executor?.watchInstance) return this.#untrack(id);
    const key = `${row.instanceId}\n${JSON.stringify(row.metadata)}`;
    if (this.#watches.get(id)?.key === key) return;
    this.#watches.get(id)?.stop();
    try {
      const stop = executor.watchInstance({ identity: sessionIdentity(id, row.instanceId), metadata: row.metadata }, (reason, message) => this.#trouble(id, key, reason, message));
      this.#watches.set(id, { key, stop });
    } catch (err) {
      this.#watches.delete(id);
      this.#ctx.log.warn({ session: id, err: sanitize(errorMessage(err)) }, 'cannot watch the instance; it heals on the next command');
    }
  }

  #untrack(id: string): void {
    this.#bump(id);
    this.#watches.get(id)?.stop();
    this.#watches.delete(id);
    clearTimeout(this.#retries.get(id));
    this.#retries.delete(id);
    this.#causes.delete(id);
  }

  #trouble(id: string, key: string, reason: string, message: string): void {
    const tracked = this.#watches.get(id);
    if (this.#closed || tracked?.key !== key) return;
    tracked.stop();
    this.#watches.delete(id);
    diagnostic(this.#ctx, id, reason, sanitize(`${message}; bringing the session back`));
    this.#causes.set(id, { reason, message });
    this.#start(id, 1);
  }

  #start(id: string, attempt: number): void {
    this.#retries.delete(id);
    if (this.#closed) return;
    const p = this.#heal(id, attempt);
    this.#inflight.add(p);
    void p.finally(() => this.#inflight.delete(p));
  }

  async #heal(id: string, attempt: number): Promise<void> {
    try {
      const healed = await this.#ctx.locks.run(id, async () => {
        const session = await this.#ctx.store.getSession(id);
        const row = await this.#ctx.store.getRuntime(id);
        const live = this.#ctx.live.get(id);
        // stopped, removed or failed meanwhile: nothing to heal
        if (this.#closed || !session || session.state !== 'ready' || !row || row.state !== 'ready') return false;
        if (!live) {
          // An earlier attempt failed and took the live entry with it: bring the session back from its
          // recorded row as `berth resume` would (the same Pod when it runs, else a new one on the same
          // volume, and the agent started again). A failure there marks the session failed, saying why.
          await new SessionLaunch(this.#ctx, session, { kind: 'revive', row, intent: 'resume' }, row.executor, this.#shutdown).run();
          return true;
        }
        const status = await this.#ctx.executors
          .get(row.executor)
          ?.status({ identity: sessionIdentity(id, row.instanceId), metadata: row.metadata })
          .catch(() => null);
        // a command got there first and reconnected it
        if (status?.liveness === 'running') return true;
        await new SessionLaunch(this.#ctx, session, { kind: 'revive', row, intent: 'reconnect' }, row.executor, this.#shutdown).refresh(live, this.#causes.get(id));
        return true;
      });
      this.#causes.delete(id);
      if (healed) this.#track(id);
    } catch (err) {
      const message = sanitize(errorMessage(err));
      const session = await this.#ctx.store.getSession(id);
      if (this.#closed || session?.state !== 'ready') return;
      if (attempt >= MAX_HEAL_ATTEMPTS) {
        diagnostic(this.#ctx, id, 'HealFailed', `${message} (gave up after ${attempt} attempts; the next command retries, or berth resume ${id})`);
        return;
      }
      const delay = Math.min(FIRST_RETRY_MS * 2 ** (attempt - 1), MAX_RETRY_MS);
      diagnostic(this.#ctx, id, 'HealFailed', `${message} (retrying in ${Math.round(delay / 1000)}s)`);
      const timer = setTimeout(() => this.#start(id, attempt + 1), delay);
      timer.unref?.();
      this.#retries.set(id, timer);
    }
  }
}
