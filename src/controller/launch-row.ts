/**
 * The runtime row one session launch writes: each write carries the launch's kind and its stages,
 * the row last written is what a later write keeps (metadata, secret references) and what the
 * compare-and-swap release deletes (spec §4.1).
 * @module
 */
import type { Inventory, RuntimeRecord } from '../inventory/index.js';
import { withAgent } from './runtime-metadata.js';
import type { StageRecord } from './service.js';

/** Runtime metadata key: `fresh` or `revive`; recovery rolls a provisional fresh row back, a revive only stops. */
export const LAUNCH_KIND_KEY = 'launch_kind';

export class LaunchRow {
  #last: RuntimeRecord | null;

  constructor(
    private readonly store: Inventory,
    private readonly owner: { sessionId: string; instanceId: string; executor: string; kind: 'fresh' | 'revive' },
    /** The row a revive starts from; null for a fresh launch. */
    recorded: RuntimeRecord | null,
    /** The launch's stages as they are now (written with every row). */
    private readonly stages: () => StageRecord[],
  ) {
    this.#last = recorded;
  }

  /** The row last written (or recorded); null before the first write of a fresh launch and after the release. */
  get current(): RuntimeRecord | null {
    return this.#last;
  }

  /** The metadata of the row last written (or recorded), or none. */
  get metadata(): Record<string, string> {
    return this.#last?.metadata ?? {};
  }

  /** The secret references of the row last written (or recorded), or none. */
  get secretRefs(): Record<string, string> {
    return this.#last?.secretRefs ?? {};
  }

  async write(state: string, metadata: Record<string, string>, secretRefs: Record<string, string>): Promise<void> {
    const { sessionId, instanceId, executor, kind } = this.owner;
    this.#last = await this.store.upsertRuntime({ sessionId, instanceId, executor, state, metadata: { ...metadata, [LAUNCH_KIND_KEY]: kind }, stages: this.stages(), secretRefs });
  }

  /** Rewrites the `ready` row with the agent it runs (and why it is lost, or null). */
  writeAgent(agentId: string, lostReason: string | null): Promise<void> {
    return this.write('ready', withAgent(this.metadata, agentId, lostReason), this.secretRefs);
  }

  /** Takes `row` (written by someone else, e.g. back to `ready`) as the row last written. */
  adopt(row: RuntimeRecord): void {
    this.#last = row;
  }

  /** Compare-and-swap delete of the row this launch wrote. */
  async release(): Promise<void> {
    if (this.#last !== null) await this.store.releaseRuntime(this.owner.sessionId, this.owner.instanceId, this.#last.updatedAt);
    this.#last = null;
  }

  /** Sets the row back to `stopped`, if it is still this instance's. */
  async markStopped(): Promise<void> {
    const row = await this.store.getRuntime(this.owner.sessionId);
    if (row && row.instanceId === this.owner.instanceId) this.#last = await this.store.upsertRuntime({ ...row, state: 'stopped', stages: this.stages() });
  }
}
