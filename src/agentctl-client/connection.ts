/**
 * One WebSocket dial as a pull queue of events, with an open timeout, a heartbeat probe, abort,
 * and sends queued until the socket opens. Shared by the output stream and process attachments.
 * @module
 */
import type { CallOptions } from './http.js';
import { InboundBudget, frameSize, type BudgetAction } from './inbound-budget.js';
import { isRetryable } from './retry.js';
import type { WebSocketLike } from './websocket.js';

type SocketEvent =
  | { kind: 'open' }
  | { kind: 'message'; data: unknown }
  | { kind: 'closed'; detail: string; cause?: unknown }
  | { kind: 'fatal'; error: unknown }
  | { kind: 'aborted' };

export class Connection {
  readonly #queue: SocketEvent[] = [];
  #waiter: ((event: SocketEvent) => void) | undefined;
  #done = false;
  #open = false;
  /** Frames sent before the socket opened, flushed in order on open. */
  readonly #outbox: string[] = [];
  #openTimer: ReturnType<typeof setTimeout> | undefined;
  #heartbeatTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #onAbort = (): void => this.#push({ kind: 'aborted' });
  /**
   * Frames received and not yet pulled. A consumer that stops pulling (a slow API client behind
   * it) pauses the socket, so the sender feels TCP backpressure instead of this queue growing.
   */
  readonly #budget: InboundBudget;
  /** Set once the queue passed its hard cap: later frames are dropped, the dial is over. */
  #cut = false;

  constructor(
    private readonly socket: WebSocketLike,
    private readonly options: {
      signal: AbortSignal | undefined;
      openTimeoutMs: number;
      heartbeatMs: number;
      probe: (call: CallOptions) => Promise<unknown>;
      /** Queued bytes above which the socket is paused, and the cap past which the dial is cut. */
      budget?: { highWaterBytes: number; hardCapBytes: number };
    },
  ) {
    this.#budget = new InboundBudget(options.budget?.highWaterBytes, options.budget?.hardCapBytes);
    socket.onopen = () => {
      clearTimeout(this.#openTimer);
      this.#open = true;
      try {
        for (const text of this.#outbox.splice(0)) socket.send(text);
      } catch (err) {
        this.#push({ kind: 'closed', detail: 'socket send failed', cause: err });
        return;
      }
      this.#push({ kind: 'open' });
    };
    socket.onmessage = (event) => {
      if (this.#cut) return;
      this.#armHeartbeat();
      const size = frameSize(event.data);
      if (this.#waiter !== undefined) {
        this.#push({ kind: 'message', data: event.data });
        return;
      }
      this.#queue.push({ kind: 'message', data: event.data });
      this.#flow(this.#budget.add(size));
    };
    socket.onclose = (event) => {
      this.#open = false;
      this.#push({ kind: 'closed', detail: `socket closed (code ${event.code})` });
    };
    // Some implementations report an error without a close event; treat it as the end of this dial.
    socket.onerror = (event) => {
      const cause = (event as { error?: unknown }).error ?? event;
      this.#push({ kind: 'closed', detail: 'socket error', cause });
    };
    this.#openTimer = setTimeout(() => {
      this.#push({ kind: 'closed', detail: `not open after ${options.openTimeoutMs}ms` });
    }, options.openTimeoutMs);
    this.#armHeartbeat();
    if (options.signal?.aborted) this.#push({ kind: 'aborted' });
    options.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  next(): Promise<SocketEvent> {
    const event = this.#queue.shift();
    if (event?.kind === 'message') this.#flow(this.#budget.take(frameSize(event.data)));
    if (event !== undefined) return Promise.resolve(event);
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  /**
   * Sends a text frame, or queues it until the socket opens. Returns false when the connection is
   * over (disposed or closed): the frame was not sent.
   */
  send(text: string): boolean {
    if (this.#done) return false;
    if (!this.#open) {
      this.#outbox.push(text);
      return true;
    }
    try {
      this.socket.send(text);
      return true;
    } catch (err) {
      // CLOSING/CLOSED: the close event follows and ends the iteration
      this.#push({ kind: 'closed', detail: 'socket send failed', cause: err });
      return false;
    }
  }

  /** Detaches every handler and closes the socket; later events are ignored. */
  dispose(): void {
    this.#done = true;
    clearTimeout(this.#openTimer);
    clearTimeout(this.#heartbeatTimer);
    this.options.signal?.removeEventListener('abort', this.#onAbort);
    this.socket.onopen = null;
    this.socket.onmessage = null;
    this.socket.onclose = null;
    // Kept as a no-op: an EventEmitter-based socket (ws) throws on an 'error' nobody listens to.
    this.socket.onerror = () => undefined;
    // A paused socket would not read the peer's answer to the close below.
    if (this.#budget.clear() === 'resume') this.socket.resume?.();
    try {
      this.socket.close(1000);
    } catch {
      // already closed or closing
    }
  }

  #flow(action: BudgetAction): void {
    if (action === null) return;
    if (action === 'pause') this.socket.pause?.();
    else if (action === 'resume') this.socket.resume?.();
    else {
      // A socket that cannot pause (or kept delivering): drop what the consumer has not pulled and
      // end the dial; a stream re-dials from the last message it delivered, so nothing is lost.
      this.#cut = true;
      const dropped = this.#budget.queued;
      this.#queue.splice(0, this.#queue.length, ...this.#queue.filter((e) => e.kind !== 'message'));
      this.#budget.clear();
      this.#push({ kind: 'closed', detail: `the reader fell ${dropped} bytes behind the socket` });
    }
  }

  #push(event: SocketEvent): void {
    if (this.#done) return;
    const waiter = this.#waiter;
    if (waiter !== undefined) {
      this.#waiter = undefined;
      waiter(event);
    } else {
      this.#queue.push(event);
    }
  }

  #armHeartbeat(): void {
    if (this.options.heartbeatMs === 0) return;
    clearTimeout(this.#heartbeatTimer);
    this.#heartbeatTimer = setTimeout(() => void this.#beat(), this.options.heartbeatMs);
  }

  async #beat(): Promise<void> {
    try {
      await this.options.probe({
        signal: this.options.signal,
        timeoutMs: Math.min(this.options.heartbeatMs, this.options.openTimeoutMs),
      });
      if (!this.#done) this.#armHeartbeat();
    } catch (err) {
      if (this.options.signal?.aborted) return;
      if (isRetryable(err)) this.#push({ kind: 'closed', detail: 'heartbeat probe failed', cause: err });
      else this.#push({ kind: 'fatal', error: err });
    }
  }
}
