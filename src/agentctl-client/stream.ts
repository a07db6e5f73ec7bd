/**
 * A process output stream that survives dropped connections: it re-dials the WebSocket from the
 * last sequence number + 1, drops replayed duplicates, and ends at `exit` or when aborted.
 * @module
 */
import { StreamMessageSchema, instanceRoutes } from '../protocol/index.js';
import type { StreamMessage } from '../protocol/index.js';
import { AgentctlStreamError, AgentctlUnreachableError, ProtocolError } from './errors.js';
import type { RequestDescription } from './errors.js';
import { describeIssues, toWebSocketUrl } from './http.js';
import type { CallOptions, HttpTransport } from './http.js';
import { backoffDelay, isRetryable, resolveRetryOptions, sleep } from './retry.js';
import type { ResolvedRetryOptions, RetryOptions } from './retry.js';
import { Connection } from './connection.js';
import { messageText } from './websocket.js';
import type { WebSocketFactory } from './websocket.js';

/** Options of `InstanceClient.streamOutput`. */
export interface StreamOutputOptions {
  /** First sequence number wanted. @default 0 */
  readonly from?: number;
  /** Ends the iteration (quietly, without an error) and closes the socket. */
  readonly signal?: AbortSignal;
  /**
   * Re-dial policy: `attempts` is how many consecutive connections may fail without progress
   * before the stream gives up with AgentctlUnreachableError. @default { attempts: 8, initialDelayMs: 100, maxDelayMs: 2000 }
   */
  readonly reconnect?: RetryOptions;
  /**
   * After this many ms without a message the stream probes the process over HTTP; when agentctl
   * is unreachable the socket is presumed dead (e.g. a silently broken port-forward) and re-dialed.
   * 0 disables the probe. @default 15000
   */
  readonly heartbeatMs?: number;
}

/** Dependencies of a stream, provided by InstanceClient. */
export interface StreamContext {
  readonly transport: HttpTransport;
  readonly webSocket: () => Promise<WebSocketFactory>;
  /** One HTTP read of the process (no retries); its typed error tells why a dial failed. */
  readonly probe: (call: CallOptions) => Promise<unknown>;
}

const DEFAULT_RECONNECT: RetryOptions = { attempts: 8, initialDelayMs: 100, maxDelayMs: 2000 };
const DEFAULT_HEARTBEAT_MS = 15_000;
/** A connection that stayed open this long counts as progress even without messages. */
const STABLE_CONNECTION_MS = 5_000;
/** Error codes agentctl may send on a stream that are worth a re-dial. */
const TRANSIENT_STREAM_CODES: ReadonlySet<string> = new Set(['unavailable', 'internal']);

/** Output of one process as an async iterable of protocol stream messages; iterate it once. */
export class OutputStream implements AsyncIterable<StreamMessage> {
  #next: number;
  #started = false;
  readonly #ctx: StreamContext;
  readonly #signal: AbortSignal | undefined;
  readonly #policy: ResolvedRetryOptions;
  readonly #heartbeatMs: number;
  readonly #req: RequestDescription;

  constructor(ctx: StreamContext, processId: string, options: StreamOutputOptions = {}) {
    const from = options.from ?? 0;
    if (!Number.isInteger(from) || from < 0) throw new TypeError('from must be a non-negative integer');
    const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    if (!(heartbeatMs >= 0)) throw new TypeError('heartbeatMs must be >= 0');
    this.#ctx = ctx;
    this.#next = from;
    this.#signal = options.signal;
    this.#policy = resolveRetryOptions({ ...DEFAULT_RECONNECT, ...options.reconnect }, 'reconnect');
    this.#heartbeatMs = heartbeatMs;
    this.#req = { method: 'WS', path: instanceRoutes.processStream(processId) };
  }

  /** The next sequence number the stream will deliver: resume from here on another client. */
  get position(): number {
    return this.#next;
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamMessage> {
    if (this.#started) throw new TypeError('an OutputStream can be iterated only once');
    this.#started = true;
    return this.#run();
  }

  async *#run(): AsyncGenerator<StreamMessage, void, undefined> {
    let failures = 0;
    for (;;) {
      if (this.#signal?.aborted) return;
      const factory = await this.#ctx.webSocket();
      const url = toWebSocketUrl(this.#ctx.transport.url(this.#req.path, { from: this.#next }));
      const conn = new Connection(factory(url, { headers: this.#ctx.transport.authHeaders() }), {
        signal: this.#signal,
        openTimeoutMs: this.#ctx.transport.timeoutMs,
        heartbeatMs: this.#heartbeatMs,
        probe: this.#ctx.probe,
      });
      let opened = false;
      let openedAt = 0;
      let progressed = false;
      let last: { detail: string; cause?: unknown };
      try {
        for (;;) {
          const event = await conn.next();
          if (event.kind === 'aborted') return;
          if (event.kind === 'fatal') throw event.error;
          if (event.kind === 'closed') {
            last = event;
            break;
          }
          if (event.kind === 'open') {
            opened = true;
            openedAt = Date.now();
            continue;
          }
          const message = this.#decode(event.data);
          progressed = true;
          if (message.type === 'error') {
            const error = new AgentctlStreamError(this.#req, {
              code: message.code,
              serverMessage: this.#ctx.transport.redact(message.message),
            });
            if (!TRANSIENT_STREAM_CODES.has(message.code)) throw error;
            last = { detail: error.message, cause: error };
            break;
          }
          const accepted = this.#accept(message);
          if (accepted) yield message;
          if (message.type === 'exit') return;
        }
      } finally {
        conn.dispose();
      }
      if (progressed || (opened && Date.now() - openedAt >= STABLE_CONNECTION_MS)) failures = 0;
      failures++;
      if (failures >= this.#policy.attempts) {
        throw new AgentctlUnreachableError(this.#req, `stream lost ${failures} times without progress: ${last.detail}`, {
          mayHaveBeenApplied: false,
          cause: last.cause,
        });
      }
      // A dial that never opened may have been refused (401, 404): the HTTP probe says so with a typed error.
      if (!opened) await this.#probe();
      try {
        await sleep(backoffDelay(this.#policy, failures), this.#signal);
      } catch {
        return; // aborted while waiting
      }
    }
  }

  /** Advances the position; false for a replayed message the caller already has. */
  #accept(message: Exclude<StreamMessage, { type: 'error' }>): boolean {
    switch (message.type) {
      case 'output':
        if (message.chunk.seq < this.#next) return false;
        this.#next = message.chunk.seq + 1;
        return true;
      case 'gap':
        if (message.to <= this.#next) return false;
        this.#next = message.to;
        return true;
      case 'exit':
        this.#next = Math.max(this.#next, message.next);
        return true;
    }
  }

  #probe(): Promise<void> {
    return probeProcess(this.#ctx, this.#signal);
  }

  #decode(data: unknown): StreamMessage {
    return decodeStreamMessage(this.#ctx, this.#req, data);
  }
}

/**
 * Asks over HTTP whether the streamed process (and agentctl) is there. Transient failures are
 * swallowed (the caller re-dials or gives up by its own count); a typed refusal (401, 404) is thrown.
 */
export async function probeProcess(ctx: StreamContext, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return;
  try {
    await ctx.probe({ signal });
  } catch (err) {
    if (signal?.aborted || isRetryable(err)) return;
    throw err;
  }
}

/** Decodes one server message of a process stream socket, at the edge. */
export function decodeStreamMessage(ctx: StreamContext, req: RequestDescription, data: unknown): StreamMessage {
  let json: unknown;
  try {
    json = JSON.parse(messageText(data)) as unknown;
  } catch {
    throw new ProtocolError(req, 'stream message is not JSON text');
  }
  const parsed = StreamMessageSchema.safeParse(json);
  if (!parsed.success) {
    throw new ProtocolError(req, ctx.transport.redact(describeIssues(parsed.error)), { cause: parsed.error });
  }
  return parsed.data;
}
