/**
 * Sequenced output of one process: an in-memory window bounded by a byte cap, mirrored to an
 * append-only JSON-lines file so it can be replayed after an agentctl restart.
 *
 * Disk format, one chunk per line: `{"s":seq,"t":"o"|"e","a":"<ISO time>","d":"<base64>"}`.
 * The file is rewritten from the retained window when it grows well past the cap, and on open
 * (which also drops a torn last line left by a crash), so disk use stays bounded too.
 * @module
 */
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import type { OutputChunk, OutputStreamName } from '../../protocol/index.js';

export interface StoredChunk {
  readonly seq: number;
  readonly stream: OutputStreamName;
  readonly at: string;
  readonly data: Buffer;
}

interface OutputPageSlice {
  readonly chunks: readonly StoredChunk[];
  readonly next: number;
  readonly firstAvailable: number;
}

/** Disk usage that triggers a rewrite, as a multiple of the memory cap (base64 adds a third). */
const COMPACT_FACTOR = 3;

export function toWireChunk(chunk: StoredChunk): OutputChunk {
  return { seq: chunk.seq, stream: chunk.stream, data: chunk.data.toString('base64'), at: chunk.at };
}

function encodeLine(chunk: StoredChunk): string {
  return `${JSON.stringify({ s: chunk.seq, t: chunk.stream === 'stdout' ? 'o' : 'e', a: chunk.at, d: chunk.data.toString('base64') })}\n`;
}

function decodeLine(line: string): StoredChunk | null {
  try {
    const v = JSON.parse(line) as { s?: unknown; t?: unknown; a?: unknown; d?: unknown };
    if (typeof v.s !== 'number' || !Number.isInteger(v.s) || v.s < 0) return null;
    if ((v.t !== 'o' && v.t !== 'e') || typeof v.a !== 'string' || typeof v.d !== 'string') return null;
    return { seq: v.s, stream: v.t === 'o' ? 'stdout' : 'stderr', at: v.a, data: Buffer.from(v.d, 'base64') };
  } catch {
    return null;
  }
}

export class OutputLog {
  readonly #path: string;
  readonly #maxBytes: number;
  #chunks: StoredChunk[] = [];
  /** Index in `#chunks` of the oldest retained chunk (dropped ones are spliced out in batches). */
  #head = 0;
  #bytes = 0;
  #nextSeq: number;
  #firstSeq: number;
  #fd: number | null = null;
  #diskBytes = 0;

  private constructor(path: string, maxBytes: number, nextSeq: number) {
    this.#path = path;
    this.#maxBytes = maxBytes;
    this.#nextSeq = nextSeq;
    this.#firstSeq = nextSeq;
  }

  /**
   * Opens (or creates) the log at `path`. `minNextSeq` comes from the process metadata, for a
   * process whose last chunks were dropped before they reached the file.
   */
  static open(path: string, maxBytes: number, minNextSeq = 0): OutputLog {
    const log = OutputLog.load(path, maxBytes, minNextSeq);
    log.#rewrite();
    return log;
  }

  /** Reads the log at `path` (if any) into memory without opening it for appending. */
  static load(path: string, maxBytes: number, minNextSeq = 0): OutputLog {
    return OutputLog.#fromText(path, existsSync(path) ? readFileSync(path, 'utf8') : '', maxBytes, minNextSeq);
  }

  /**
   * A read-only log of the lines in `text` (what a reader outside agentctl read of the file, perhaps
   * only its tail); appending to it writes nothing.
   */
  static parse(text: string, maxBytes: number, minNextSeq = 0): OutputLog {
    return OutputLog.#fromText('', text, maxBytes, minNextSeq);
  }

  static #fromText(path: string, text: string, maxBytes: number, minNextSeq: number): OutputLog {
    const log = new OutputLog(path, maxBytes, 0);
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const chunk = decodeLine(line);
      // Sequence numbers only grow; anything else is a torn or foreign line.
      if (chunk === null || (log.#retained() > 0 && chunk.seq < log.#nextSeq)) continue;
      if (log.#retained() === 0) log.#firstSeq = chunk.seq;
      log.#push(chunk);
    }
    if (minNextSeq > log.#nextSeq) {
      log.#nextSeq = minNextSeq;
      if (log.#retained() === 0) log.#firstSeq = minNextSeq;
    }
    return log;
  }

  get nextSeq(): number {
    return this.#nextSeq;
  }

  get firstAvailable(): number {
    return this.#firstSeq;
  }

  /** Appends a chunk (to disk first, then memory) and returns it. */
  append(stream: OutputStreamName, data: Buffer): StoredChunk {
    const chunk: StoredChunk = { seq: this.#nextSeq, stream, at: new Date().toISOString(), data };
    if (this.#fd !== null) {
      const line = encodeLine(chunk);
      writeSync(this.#fd, line);
      this.#diskBytes += Buffer.byteLength(line);
    }
    if (this.#retained() === 0) this.#firstSeq = chunk.seq;
    this.#push(chunk);
    if (this.#fd !== null && this.#diskBytes > COMPACT_FACTOR * this.#maxBytes + 1024 * 1024) this.#rewrite();
    return chunk;
  }

  /** Chunks from `from` (clamped to what is retained), at most `limit`. */
  page(from: number, limit: number): OutputPageSlice {
    const start = Math.max(from, this.#firstSeq);
    const chunks: StoredChunk[] = [];
    const offset = this.#head + (start - this.#firstSeq);
    for (let i = offset; i < this.#chunks.length && chunks.length < limit; i++) chunks.push(this.#chunks[i] as StoredChunk);
    const last = chunks[chunks.length - 1];
    // Nothing at or past `start` is retained: continue at the next sequence (skips a hole at the end).
    const next = last !== undefined ? last.seq + 1 : this.#nextSeq;
    return { chunks, next, firstAvailable: this.#firstSeq };
  }

  /** Stops writing to disk (the memory window stays readable). */
  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }

  #retained(): number {
    return this.#chunks.length - this.#head;
  }

  #push(chunk: StoredChunk): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.data.length;
    this.#nextSeq = chunk.seq + 1;
    // Drop the oldest chunks past the cap, but always keep the newest one.
    while (this.#bytes > this.#maxBytes && this.#retained() > 1) {
      const dropped = this.#chunks[this.#head] as StoredChunk;
      this.#bytes -= dropped.data.length;
      this.#head++;
      this.#firstSeq = (this.#chunks[this.#head] as StoredChunk).seq;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Rewrites the file from the retained window (atomic rename) and reopens it for appending. */
  #rewrite(): void {
    this.close();
    const temp = `${this.#path}.tmp`;
    const fd = openSync(temp, 'w', 0o600);
    let bytes = 0;
    try {
      for (let i = this.#head; i < this.#chunks.length; i++) {
        const line = encodeLine(this.#chunks[i] as StoredChunk);
        writeSync(fd, line);
        bytes += Buffer.byteLength(line);
      }
    } finally {
      closeSync(fd);
    }
    renameSync(temp, this.#path);
    this.#fd = openSync(this.#path, 'a', 0o600);
    this.#diskBytes = bytes;
  }
}
