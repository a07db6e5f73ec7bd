/**
 * The durable event log of an ACP process: typed events (protocol/acp.ts AcpEvent) with sequence
 * numbers of their own, resumable like the output. It is stored in the output log's format and
 * file handling (`events.jsonl` beside `output.jsonl`, same retention cap): each record's data is
 * one event as UTF-8 JSON (the record's stream name carries no meaning here).
 * @module
 */
import type { AcpEvent, EventPage } from '../../protocol/index.js';
import { OutputLog, type StoredChunk } from '../processes/output-log.js';

export const EVENTS_FILE = 'events.jsonl';

type RecordedEvent = EventPage['events'][number];

/** The bytes stored for `event`. */
export function encodeEvent(event: AcpEvent): Buffer {
  return Buffer.from(JSON.stringify(event), 'utf8');
}

/** The event a stored record holds; null for a record that is not one (a torn or foreign line). */
export function decodeEvent(chunk: StoredChunk): RecordedEvent | null {
  try {
    const event = JSON.parse(chunk.data.toString('utf8')) as AcpEvent;
    if (typeof event !== 'object' || event === null || typeof event.type !== 'string') return null;
    return { seq: chunk.seq, at: chunk.at, event };
  } catch {
    return null;
  }
}

export class EventLog {
  readonly #waiters = new Set<() => void>();
  #closed = false;

  private constructor(readonly log: OutputLog) {}

  /** Resolves once an event with a sequence number >= `seq` is recorded, the log is closed (the process exited), or after `ms`. */
  waitFor(seq: number, ms: number): Promise<void> {
    if (this.nextSeq > seq || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve();
      };
      const check = (): void => {
        if (this.nextSeq > seq || this.#closed) done();
      };
      const timer = setTimeout(done, ms);
      this.#waiters.add(check);
    });
  }

  /** Opens (or creates) the log at `path` for appending. */
  static open(path: string, maxBytes: number): EventLog {
    return new EventLog(OutputLog.open(path, maxBytes));
  }

  /** Reads the log at `path` (if any) without opening it for appending. */
  static load(path: string, maxBytes: number): EventLog {
    return new EventLog(OutputLog.load(path, maxBytes));
  }

  get nextSeq(): number {
    return this.log.nextSeq;
  }

  /** Appends `event` (synchronously: the order of calls is the order on disk). */
  append(event: AcpEvent): RecordedEvent {
    const chunk = this.log.append('stdout', encodeEvent(event));
    for (const w of [...this.#waiters]) w();
    return { seq: chunk.seq, at: chunk.at, event };
  }

  /** Events from `from`, at most `limit`, as an EventPage (`exited`: the process has ended). */
  page(from: number, limit: number, exited: boolean): EventPage {
    const slice = this.log.page(from, limit);
    const events = slice.chunks.map(decodeEvent).filter((e): e is RecordedEvent => e !== null);
    return { events, next: slice.next, first_available: slice.firstAvailable, complete: exited && slice.next >= this.log.nextSeq };
  }

  close(): void {
    this.#closed = true;
    for (const w of [...this.#waiters]) w();
    this.log.close();
  }
}
