/**
 * The live session map: sessionId → the connected instance and its agent process. Replacing an
 * entry closes the old one (aborting its streams), so two clients never serve one session.
 * @module
 */
import type { ExecutorInstance } from '../executors/executor.js';
import type { AgentProcessView } from './service.js';

export interface LiveSession {
  instance: ExecutorInstance;
  agentProcessId: string | null;
  agent: AgentProcessView | null;
  /** Aborted when the entry is replaced or removed: ends streams opened through it. */
  readonly abort: AbortController;
}

export class LiveSessions {
  readonly #map = new Map<string, LiveSession>();
  /** Called with each entry `replace` installs (the manager starts its output follower there); must not throw. */
  onOpen: ((sessionId: string, entry: LiveSession) => void) | null = null;

  get(sessionId: string): LiveSession | undefined {
    return this.#map.get(sessionId);
  }

  /** Installs a new entry and closes the previous one. */
  replace(sessionId: string, instance: ExecutorInstance, agentProcessId: string | null = null): LiveSession {
    this.take(sessionId);
    const entry: LiveSession = { instance, agentProcessId, agent: null, abort: new AbortController() };
    this.#map.set(sessionId, entry);
    this.onOpen?.(sessionId, entry);
    return entry;
  }

  /**
   * Removes and closes an entry: its streams are aborted and the instance's local connections
   * (port-forwards) released. The instance itself keeps running.
   */
  take(sessionId: string): LiveSession | undefined {
    const old = this.detach(sessionId);
    if (old) void old.instance.close().catch(() => undefined);
    return old;
  }

  /**
   * Removes an entry and ends its streams but leaves the instance's connections open: for a stop or
   * a rollback that still talks to agentctl through them. The caller closes the instance after.
   */
  detach(sessionId: string): LiveSession | undefined {
    const old = this.#map.get(sessionId);
    if (old) {
      this.#map.delete(sessionId);
      old.abort.abort(new Error(`session ${sessionId}: connection replaced or closed`));
    }
    return old;
  }

  closeAll(): void {
    for (const id of [...this.#map.keys()]) this.take(id);
  }

  get size(): number {
    return this.#map.size;
  }
}
