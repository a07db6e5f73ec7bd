/**
 * Test support (never imported by shipped code): a recording fake of the Events port
 * (kube/ports.ts `KubeEvents`). Every Event written is kept in order in {@link FakeKubeEvents.written};
 * {@link FakeKubeEvents.fail} makes each create reject (a 403 from a Role without the rule) or hang
 * until its signal aborts (a slow API server).
 * @module
 */
import type { EventRecord, KubeEvents } from '../kube/index.js';

export class FakeKubeEvents implements KubeEvents {
  /** Every Event written, in order. */
  readonly written: EventRecord[] = [];
  /** Every create attempted (written or not). */
  attempts = 0;
  /** An error to reject each create with, `'hang'` to never answer, or null to write. */
  fail: Error | 'hang' | null = null;
  /** Called at each create (e.g. to see what else had happened by then). */
  onCreate: (record: EventRecord) => void = () => undefined;

  create(record: EventRecord, signal: AbortSignal): Promise<void> {
    this.attempts++;
    this.onCreate(record);
    if (this.fail === 'hang') return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    if (this.fail !== null) return Promise.reject(this.fail);
    this.written.push(structuredClone(record));
    return Promise.resolve();
  }

  /** The Events written with `reason`, as `kind/name: note`. */
  notes(reason: string): string[] {
    return this.written.filter((e) => e.reason === reason).map((e) => `${e.regarding.kind}/${e.regarding.name}: ${e.note}`);
  }
}
