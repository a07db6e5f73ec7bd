/**
 * The bound on what one WebSocket dial may hold for a consumer that has not pulled it yet: above
 * the high-water mark the socket is paused (TCP flow control then reaches the sender), below the
 * low-water mark it is resumed, and past the hard cap (a socket that cannot pause) the dial is cut
 * so the reader re-dials from its position instead of buffering without bound. Pure bookkeeping.
 * @module
 */

/** Bytes a dial may queue before its socket is paused. @default 1 MiB */
const DEFAULT_HIGH_WATER_BYTES = 1 << 20;
/** Bytes a dial may queue at all before it is cut. @default 8 MiB */
const DEFAULT_HARD_CAP_BYTES = 8 << 20;

/** What the owner of the socket should do after a change of the queued bytes. */
export type BudgetAction = 'pause' | 'resume' | 'cut' | null;

export class InboundBudget {
  #bytes = 0;
  #paused = false;
  readonly #high: number;
  readonly #low: number;
  readonly #cap: number;

  constructor(highWater = DEFAULT_HIGH_WATER_BYTES, hardCap = DEFAULT_HARD_CAP_BYTES) {
    if (!(highWater > 0) || !(hardCap >= highWater)) throw new TypeError('inbound budget: need 0 < highWater <= hardCap');
    this.#high = highWater;
    this.#low = Math.floor(highWater / 2);
    this.#cap = hardCap;
  }

  /** Bytes queued and not yet taken by the consumer. */
  get queued(): number {
    return this.#bytes;
  }

  get paused(): boolean {
    return this.#paused;
  }

  /** A frame of `bytes` was queued. */
  add(bytes: number): BudgetAction {
    this.#bytes += bytes;
    if (this.#bytes > this.#cap) return 'cut';
    if (!this.#paused && this.#bytes > this.#high) {
      this.#paused = true;
      return 'pause';
    }
    return null;
  }

  /** The consumer took a frame of `bytes`. */
  take(bytes: number): BudgetAction {
    this.#bytes = Math.max(0, this.#bytes - bytes);
    if (this.#paused && this.#bytes <= this.#low) {
      this.#paused = false;
      return 'resume';
    }
    return null;
  }

  /** Everything queued was dropped (the dial was cut). */
  clear(): BudgetAction {
    this.#bytes = 0;
    if (!this.#paused) return null;
    this.#paused = false;
    return 'resume';
  }
}

/** The size a message event's data occupies (string length, or the bytes of a buffer / buffer list). */
export function frameSize(data: unknown): number {
  if (typeof data === 'string') return data.length;
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (ArrayBuffer.isView(data)) return data.byteLength;
  if (Array.isArray(data)) return data.reduce((sum: number, part: unknown) => sum + frameSize(part), 0);
  return 0;
}
