/**
 * The tail of one agent run's output, as the output mirror keeps it: read from agentctl backwards
 * from the end (outputTail: a stop's copy, a follower's start), and held in memory while it streams
 * (RunTail: bounded exactly as the inventory bounds a run, its last `maxBytes`).
 * @module
 */
import type { InstanceClient } from '../agentctl-client/index.js';
import type { RecordedOutputInput } from '../inventory/index.js';
import { LIMITS, type OutputChunk } from '../protocol/index.js';

/** The client calls the mirror needs (a narrow seam for tests). */
export type OutputReader = Pick<InstanceClient, 'readOutput'>;

/** One held chunk: its raw bytes (the bound counts them). */
interface HeldChunk {
  seq: number;
  stream: 'stdout' | 'stderr';
  data: Buffer;
}

/**
 * The last `maxBytes` of a run's output, appended to as it streams: whole chunks are dropped from
 * the front, and the oldest kept chunk keeps only its tail when it would pass the bound, the rule
 * the inventory applies to a write (so a write of `chunks()` stores exactly this). Memory: about
 * `maxBytes` plus the chunks' bookkeeping.
 */
export class RunTail {
  readonly #maxBytes: number;
  readonly #chunks: HeldChunk[] = [];
  #bytes = 0;

  constructor(maxBytes: number) {
    if (!Number.isInteger(maxBytes) || maxBytes < 1) throw new TypeError(`RunTail: maxBytes must be a positive integer, got ${maxBytes}`);
    this.#maxBytes = maxBytes;
  }

  /** The sequence number of the last chunk held, or null while none is. */
  get last(): number | null {
    return this.#chunks.at(-1)?.seq ?? null;
  }

  /** The bytes of output held (at most `maxBytes`). */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Appends the chunks that follow the last one held (in sequence order; a repeated or older
   * sequence number is skipped) and trims to the bound; true when anything was appended.
   * `data` is raw bytes or their base64 (as agentctl sends them).
   */
  append(chunks: readonly RecordedOutputInput[]): boolean {
    let added = false;
    for (const c of [...chunks].sort((a, b) => a.seq - b.seq)) {
      const last = this.last;
      if (last !== null && c.seq <= last) continue;
      const data = typeof c.data === 'string' ? Buffer.from(c.data, 'base64') : Buffer.from(c.data);
      this.#chunks.push({ seq: c.seq, stream: c.stream, data });
      this.#bytes += data.length;
      added = true;
    }
    if (added) this.#trim();
    return added;
  }

  /** The chunks held, in sequence order (raw bytes), as a store write takes them. */
  chunks(): RecordedOutputInput[] {
    return this.#chunks.map((c) => ({ seq: c.seq, stream: c.stream, data: c.data }));
  }

  #trim(): void {
    // a chunk stays while the chunks after it hold less than the bound (the inventory's rule, from the back)
    for (let first = this.#chunks[0]; first !== undefined && this.#bytes - first.data.length >= this.#maxBytes; first = this.#chunks[0]) {
      this.#chunks.shift();
      this.#bytes -= first.data.length;
    }
    const first = this.#chunks[0];
    if (first !== undefined && this.#bytes > this.#maxBytes) {
      const cut = this.#bytes - this.#maxBytes;
      first.data = Buffer.from(first.data.subarray(cut)); // a copy: the cut-off bytes are freed
      this.#bytes -= cut;
    }
  }
}

/**
 * The last chunks of process `processId` holding at least `maxBytes` of output (or all it retains),
 * in sequence order, and the sequence number to read on from: pages are read backwards from the
 * end, so a long run costs about `maxBytes` plus a page, not everything agentctl retains.
 */
export async function outputTail(client: OutputReader, processId: string, maxBytes: number, signal: AbortSignal): Promise<{ chunks: RecordedOutputInput[]; next: number }> {
  const probe = await client.readOutput(processId, { from: Number.MAX_SAFE_INTEGER, limit: 1, signal });
  const pages: OutputChunk[][] = [];
  let bytes = 0;
  for (let end = probe.next; end > probe.first_available && bytes < maxBytes; ) {
    const start = Math.max(probe.first_available, end - LIMITS.maxOutputPage);
    const page = await client.readOutput(processId, { from: start, limit: end - start, signal });
    const chunks = page.chunks.filter((c) => c.seq < end);
    pages.unshift(chunks);
    for (const c of chunks) bytes += Buffer.byteLength(c.data, 'base64');
    if (chunks.length === 0) break; // nothing retained there after all
    end = start;
  }
  return { chunks: pages.flat().map((c) => ({ seq: c.seq, stream: c.stream, data: c.data })), next: probe.next };
}
