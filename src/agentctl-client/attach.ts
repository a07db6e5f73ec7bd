/**
 * A process attachment: one WebSocket on `…/processes/{id}/stream` that carries the process's
 * output out (as StreamMessage) and its stdin, end of input and signals in (StreamClientMessage).
 * @module
 */
import { MAX_STREAM_STDIN_BYTES, instanceRoutes } from '../protocol/index.js';
import type { SignalName, StreamClientMessage, StreamMessage } from '../protocol/index.js';
import { bytesToBase64 } from './base64.js';
import { Connection } from './connection.js';
import { AgentctlUnreachableError } from './errors.js';
import type { RequestDescription } from './errors.js';
import { toWebSocketUrl } from './http.js';
import { decodeStreamMessage, probeProcess, type StreamContext } from './stream.js';

/** Options of `InstanceClient.attach`. */
export interface AttachOptions {
  /** First output sequence number wanted (earlier output is replayed). @default 0 */
  readonly from?: number;
  /** Ends the iteration quietly and closes the socket (the process keeps running). */
  readonly signal?: AbortSignal;
  /**
   * After this many ms without a message the process is probed over HTTP; when agentctl is
   * unreachable the attachment fails with AgentctlUnreachableError. 0 disables the probe. @default 15000
   */
  readonly heartbeatMs?: number;
}

const DEFAULT_HEARTBEAT_MS = 15_000;

/**
 * Output and input of one process over one socket. Iterate it (once) for the output; the
 * iteration ends after the `exit` message, or quietly on `close()` / abort. `error` messages
 * answer input that could not be applied (e.g. stdin already closed) and do not end it.
 *
 * Unlike `OutputStream` an attachment does not re-dial: input sent into a dropped connection may
 * or may not have arrived, so a lost socket ends the iteration with AgentctlUnreachableError
 * (`mayHaveBeenApplied: true`) and the caller decides (attach again from `position`).
 *
 * Writes never block: frames sent before the socket opens are queued and sent in order on open.
 */
export class ProcessAttachment implements AsyncIterable<StreamMessage> {
  #next: number;
  #started = false;
  #ended = false;
  /** The dial, once the WebSocket factory is loaded; until then frames wait in #outbox. */
  #conn: Connection | undefined;
  readonly #outbox: string[] = [];
  readonly #ready: Promise<Connection>;
  readonly #req: RequestDescription;
  readonly #ctx: StreamContext;
  readonly #signal: AbortSignal | undefined;
  readonly #closer = new AbortController();

  constructor(ctx: StreamContext, processId: string, options: AttachOptions = {}) {
    const from = options.from ?? 0;
    if (!Number.isInteger(from) || from < 0) throw new TypeError('from must be a non-negative integer');
    const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    if (!(heartbeatMs >= 0)) throw new TypeError('heartbeatMs must be >= 0');
    this.#ctx = ctx;
    this.#next = from;
    this.#signal = options.signal;
    this.#req = { method: 'WS', path: instanceRoutes.processStream(processId) };
    const signal = options.signal === undefined ? this.#closer.signal : AbortSignal.any([options.signal, this.#closer.signal]);
    // Dialed now, not on first iteration, so input written before iterating is not held back.
    this.#ready = ctx.webSocket().then((factory) => {
      const url = toWebSocketUrl(ctx.transport.url(this.#req.path, { from }));
      const conn = new Connection(factory(url, { headers: ctx.transport.authHeaders() }), {
        signal,
        openTimeoutMs: ctx.transport.timeoutMs,
        heartbeatMs,
        probe: ctx.probe,
      });
      for (const text of this.#outbox.splice(0)) conn.send(text);
      this.#conn = conn;
      if (this.#ended && !this.#started) conn.dispose();
      return conn;
    });
    this.#ready.catch(() => undefined); // surfaced by the iteration
  }

  /** The next output sequence number the attachment will deliver (attach again from here). */
  get position(): number {
    return this.#next;
  }

  /**
   * Writes bytes (or text as UTF-8) to the process's stdin, split into frames of at most
   * MAX_STREAM_STDIN_BYTES. Returns false when the attachment is over and nothing was sent.
   */
  write(data: string | Uint8Array): boolean {
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    for (let i = 0; i < bytes.length; i += MAX_STREAM_STDIN_BYTES) {
      if (!this.#send({ type: 'stdin', data: bytesToBase64(bytes.subarray(i, i + MAX_STREAM_STDIN_BYTES)) })) return false;
    }
    return true;
  }

  /** Closes the process's stdin (after everything written before). */
  end(): boolean {
    return this.#send({ type: 'eof' });
  }

  /** Sends a signal to the process group. */
  kill(signal: SignalName): boolean {
    return this.#send({ type: 'signal', signal });
  }

  /** Detaches (the process keeps running); the iteration ends quietly. */
  close(): void {
    this.#ended = true;
    this.#closer.abort();
    if (!this.#started) this.#conn?.dispose();
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamMessage> {
    if (this.#started) throw new TypeError('a ProcessAttachment can be iterated only once');
    this.#started = true;
    return this.#run();
  }

  #send(message: StreamClientMessage): boolean {
    if (this.#ended) return false;
    const text = JSON.stringify(message);
    if (this.#conn === undefined) {
      this.#outbox.push(text);
      return true;
    }
    return this.#conn.send(text);
  }

  async *#run(): AsyncGenerator<StreamMessage, void, undefined> {
    let opened = false;
    const conn = await this.#ready;
    if (this.#closer.signal.aborted) {
      conn.dispose();
      return; // closed before the iteration began
    }
    try {
      for (;;) {
        const event = await conn.next();
        if (event.kind === 'aborted') return;
        if (event.kind === 'fatal') throw event.error;
        if (event.kind === 'open') {
          opened = true;
          continue;
        }
        if (event.kind === 'closed') {
          // A dial that never opened may have been refused (401, 404): the probe says so with a typed error.
          if (!opened) await this.#probe();
          throw new AgentctlUnreachableError(this.#req, `attachment lost: ${event.detail}`, { mayHaveBeenApplied: true, cause: event.cause });
        }
        const message = this.#decode(event.data);
        if (message.type === 'output') {
          if (message.chunk.seq < this.#next) continue;
          this.#next = message.chunk.seq + 1;
        } else if (message.type === 'gap') {
          this.#next = Math.max(this.#next, message.to);
        } else if (message.type === 'exit') {
          this.#next = Math.max(this.#next, message.next);
        }
        yield message;
        if (message.type === 'exit') return;
      }
    } finally {
      this.#ended = true;
      conn.dispose();
    }
  }

  #probe(): Promise<void> {
    return probeProcess(this.#ctx, this.#signal);
  }

  #decode(data: unknown): StreamMessage {
    return decodeStreamMessage(this.#ctx, this.#req, data);
  }
}

