/**
 * An in-memory Lease with the API server's optimistic concurrency (resourceVersion, AlreadyExists,
 * Conflict), and per-client ports whose calls can fail, or have their request or their response
 * held back, to script the interleavings leader election must survive.
 * @module
 */
import { LeaseApiError, LeaseConflictError } from '../lease-port.js';
import type { LeasePort, LeaseRecord, LeaseState } from '../lease-port.js';

function copy(state: LeaseState): LeaseState {
  return {
    ...state,
    acquireTime: state.acquireTime && new Date(state.acquireTime),
    renewTime: state.renewTime && new Date(state.renewTime),
  };
}

/** The one Lease all ports of a store share (the API server). */
export class FakeLeaseStore {
  #lease: LeaseState | null = null;
  #version = 0;
  /** Every write that took effect, in order. */
  readonly writes: { client: string; op: 'create' | 'replace'; state: LeaseState }[] = [];

  get lease(): LeaseState | null {
    return this.#lease && copy(this.#lease);
  }

  /** Writes the Lease directly (another tool, or an admin), bumping its resourceVersion. */
  put(record: LeaseRecord | null): void {
    this.#lease = record && { ...record, resourceVersion: String(++this.#version) };
  }

  port(client: string): FakeLeasePort {
    return new FakeLeasePort(this, client);
  }

  get(): LeaseState | null {
    return this.lease;
  }

  create(client: string, record: LeaseRecord): LeaseState {
    if (this.#lease !== null) throw new LeaseConflictError('fake/lease', 'already-exists');
    return this.#write(client, 'create', record);
  }

  replace(client: string, state: LeaseState): LeaseState {
    if (this.#lease === null || this.#lease.resourceVersion !== state.resourceVersion) throw new LeaseConflictError('fake/lease', 'conflict');
    return this.#write(client, 'replace', state);
  }

  #write(client: string, op: 'create' | 'replace', record: LeaseRecord): LeaseState {
    const { holderIdentity, leaseDurationSeconds, acquireTime, renewTime, leaseTransitions } = record;
    const next = { holderIdentity, leaseDurationSeconds, acquireTime, renewTime, leaseTransitions, resourceVersion: String(++this.#version) };
    this.#lease = copy(next);
    this.writes.push({ client, op, state: copy(next) });
    return copy(next);
  }
}

/**
 * How this client's calls behave: `ok`; `fail` (rejected before reaching the store: an unreachable
 * API server); `hold-request` (reaches the store only at resume(), even if the caller gave up on
 * it meanwhile, as a slow network may deliver it); `hold-response` (applied now, answered at resume()).
 */
export type FakePortMode = 'ok' | 'fail' | 'hold-request' | 'hold-response';

export class FakeLeasePort implements LeasePort {
  mode: FakePortMode = 'ok';
  /** When set, `mode` applies to these calls only; the others go through. */
  only: ('get' | 'create' | 'replace')[] | null = null;
  calls = 0;
  #held: (() => void)[] = [];

  constructor(
    private readonly store: FakeLeaseStore,
    private readonly client: string,
  ) {}

  /** Lets every held call through (in order) and returns to `ok`. */
  resume(): void {
    this.mode = 'ok';
    this.only = null;
    const held = this.#held;
    this.#held = [];
    for (const release of held) release();
  }

  get(signal?: AbortSignal): Promise<LeaseState | null> {
    return this.#call('get', signal, () => this.store.get());
  }

  create(record: LeaseRecord, signal?: AbortSignal): Promise<LeaseState> {
    return this.#call('create', signal, () => this.store.create(this.client, record));
  }

  replace(state: LeaseState, signal?: AbortSignal): Promise<LeaseState> {
    return this.#call('replace', signal, () => this.store.replace(this.client, state));
  }

  #call<T>(name: 'get' | 'create' | 'replace', signal: AbortSignal | undefined, op: () => T): Promise<T> {
    this.calls++;
    const mode = this.only === null || this.only.includes(name) ? this.mode : 'ok';
    if (mode === 'fail') return Promise.reject(new LeaseApiError(`${this.client}: connection refused`, {}));
    if (mode === 'ok') return new Promise<T>((resolve) => resolve(op()));
    return new Promise<T>((resolve, reject) => {
      signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      if (mode === 'hold-response') {
        let result: { ok: true; value: T } | { ok: false; error: unknown };
        try {
          result = { ok: true, value: op() };
        } catch (error) {
          result = { ok: false, error };
        }
        this.#held.push(() => (result.ok ? resolve(result.value) : reject(result.error as Error)));
      } else {
        this.#held.push(() => {
          try {
            resolve(op());
          } catch (error) {
            reject(error as Error);
          }
        });
      }
    });
  }
}
