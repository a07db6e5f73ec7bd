/**
 * The client of one agentctl instance server: processes, output, files, git and ACP processes (acp.ts).
 * @module
 */
import {
  ActivityReportSchema,
  HEADER,
  HealthResponseSchema,
  InstanceIdSchema,
  LIMITS,
  OutputPageSchema,
  ProcessInfoSchema,
  ProcessListSchema,
  instanceRoutes,
} from '../protocol/index.js';
import type {
  ActivityReport,
  HealthResponse,
  OutputChunk,
  OutputPage,
  ProcessInfo,
  SignalName,
  StartProcessRequest,
  StdinRequest,
} from '../protocol/index.js';
import { AcpProcessClient } from './acp.js';
import { bytesToBase64 } from './base64.js';
import { FilesClient } from './files.js';
import { GitClient } from './git.js';
import { HttpTransport } from './http.js';
import type { CallOptions, HttpClientOptions } from './http.js';
import { ProcessAttachment } from './attach.js';
import type { AttachOptions } from './attach.js';
import { OutputStream } from './stream.js';
import type { StreamContext, StreamOutputOptions } from './stream.js';
import { loadDefaultWebSocketFactory } from './websocket.js';
import type { WebSocketFactory } from './websocket.js';

/** A bearer token, or a function returning the current one (so a re-handshake reaches every client). */
type TokenSource = string | (() => string);

interface InstanceClientOptions extends HttpClientOptions {
  /** The instance server, e.g. `http://127.0.0.1:41001` or the local end of its port-forward. */
  readonly baseUrl: string;
  readonly token: TokenSource;
  /** The agentctl instance id, sent as X-Instance-ID so a recycled port is never mistaken. */
  readonly instanceId: string;
  /** @default the `ws` package, loaded on first use */
  readonly webSocket?: WebSocketFactory;
}

interface WriteStdinOptions extends CallOptions {
  /** Close stdin after writing. @default false */
  readonly eof?: boolean;
}

interface ReadOutputOptions extends CallOptions {
  /** First sequence number. @default 0 */
  readonly from?: number;
  /** Max chunks (max LIMITS.maxOutputPage). @default LIMITS.maxOutputPage */
  readonly limit?: number;
}

/** Everything `readAllOutput` could read. */
interface AllOutput {
  readonly chunks: OutputChunk[];
  /** Where to continue reading (or streaming) from. */
  readonly next: number;
  /** The process has exited and every retained chunk was read. */
  readonly complete: boolean;
  /** Oldest retained sequence number: when greater than `from`, earlier chunks were dropped. */
  readonly firstAvailable: number;
}

/** Reads a token source, refusing an empty token. */
function currentToken(source: TokenSource): string {
  const token = typeof source === 'function' ? source() : source;
  if (token === '') throw new TypeError('token must not be empty (call handshake first)');
  return token;
}

/** Typed client of one instance. Cheap to create; it holds no connection between calls. */
export class InstanceClient {
  readonly instanceId: string;
  /** Workspace files. */
  readonly files: FilesClient;
  /** Workspace git. */
  readonly git: GitClient;
  /** Processes spoken to over the Agent Client Protocol: turns, cancel, events, permissions. */
  readonly acp: AcpProcessClient;
  readonly #transport: HttpTransport;
  readonly #webSocket: () => Promise<WebSocketFactory>;

  constructor(options: InstanceClientOptions) {
    if (!InstanceIdSchema.safeParse(options.instanceId).success) {
      throw new TypeError('instanceId must be letters, digits, ".", "_" or "-" (at most 128)');
    }
    const token = options.token;
    if (typeof token === 'string') currentToken(token);
    this.instanceId = options.instanceId;
    this.#transport = new HttpTransport(
      options,
      () => ({ [HEADER.authorization]: `Bearer ${currentToken(token)}`, [HEADER.instanceId]: this.instanceId }),
      () => {
        try {
          return [typeof token === 'function' ? token() : token];
        } catch {
          return [];
        }
      },
    );
    const factory = options.webSocket;
    this.#webSocket = factory === undefined ? loadDefaultWebSocketFactory : () => Promise.resolve(factory);
    this.files = new FilesClient(this.#transport);
    this.git = new GitClient(this.#transport);
    this.acp = new AcpProcessClient(this.#transport);
  }

  get baseUrl(): string {
    return this.#transport.baseUrl;
  }

  health(options: CallOptions = {}): Promise<HealthResponse> {
    return this.#transport.request(
      { method: 'GET', path: instanceRoutes.health, schema: HealthResponseSchema, idempotent: true },
      options,
    );
  }

  /**
   * Whether the session is idle by the agent's real state: no turn in flight, no pending
   * permission, no child process of the agent, no open shell or exec, and no output (raw agent),
   * event (ACP), input, start or exit within `windowMs` (default 5 minutes; 1 ms to 24 hours).
   */
  activity(options: CallOptions & { readonly windowMs?: number } = {}): Promise<ActivityReport> {
    return this.#transport.request(
      { method: 'GET', path: instanceRoutes.activity, query: { window_ms: options.windowMs }, schema: ActivityReportSchema, idempotent: true },
      options,
    );
  }

  /**
   * Starts a process. Retried on transient failures only when `request.id` is set (agentctl treats a
   * repeated id as the same start); without an id an ambiguous failure must be resolved by listing.
   */
  startProcess(request: StartProcessRequest, options: CallOptions = {}): Promise<ProcessInfo> {
    return this.#transport.request(
      {
        method: 'POST',
        path: instanceRoutes.processes,
        body: request,
        schema: ProcessInfoSchema,
        idempotent: request.id !== undefined,
      },
      options,
    );
  }

  async listProcesses(options: CallOptions = {}): Promise<ProcessInfo[]> {
    const list = await this.#transport.request(
      { method: 'GET', path: instanceRoutes.processes, schema: ProcessListSchema, idempotent: true },
      options,
    );
    return list.processes;
  }

  getProcess(processId: string, options: CallOptions = {}): Promise<ProcessInfo> {
    return this.#transport.request(
      { method: 'GET', path: instanceRoutes.process(processId), schema: ProcessInfoSchema, idempotent: true },
      options,
    );
  }

  /** Writes to a process's stdin (text as UTF-8, bytes as given). Never retried. */
  writeStdin(processId: string, data: string | Uint8Array, options: WriteStdinOptions = {}): Promise<void> {
    const body: StdinRequest =
      typeof data === 'string'
        ? { data, encoding: 'utf8', eof: options.eof ?? false }
        : { data: bytesToBase64(data), encoding: 'base64', eof: options.eof ?? false };
    return this.#transport.request(
      { method: 'POST', path: instanceRoutes.processStdin(processId), body, idempotent: false },
      options,
    );
  }

  /** Sends a signal to a process. Never retried. */
  signal(processId: string, signal: SignalName, options: CallOptions = {}): Promise<void> {
    return this.#transport.request(
      { method: 'POST', path: instanceRoutes.processSignal(processId), body: { signal }, idempotent: false },
      options,
    );
  }

  /** One page of retained output from `from`. */
  readOutput(processId: string, options: ReadOutputOptions = {}): Promise<OutputPage> {
    return this.#transport.request(
      {
        method: 'GET',
        path: instanceRoutes.processOutput(processId),
        query: { from: options.from, limit: options.limit },
        schema: OutputPageSchema,
        idempotent: true,
      },
      options,
    );
  }

  /** Reads pages until the output so far is exhausted (or complete, for an exited process). */
  async readAllOutput(processId: string, options: Omit<ReadOutputOptions, 'limit'> = {}): Promise<AllOutput> {
    const chunks: OutputChunk[] = [];
    let from = options.from ?? 0;
    let firstAvailable: number | undefined;
    for (;;) {
      const page = await this.readOutput(processId, { ...options, from, limit: LIMITS.maxOutputPage });
      chunks.push(...page.chunks);
      firstAvailable ??= page.first_available;
      const stalled = page.chunks.length === 0 || page.next <= from;
      from = Math.max(from, page.next);
      if (page.complete || stalled) return { chunks, next: from, complete: page.complete, firstAvailable };
    }
  }

  /**
   * Streams output from `options.from` over a WebSocket. After a dropped connection the stream
   * re-dials from its last sequence number + 1 (bounded backoff), so nothing is lost or repeated;
   * it ends after the `exit` message or when `options.signal` aborts, and yields `gap` messages
   * for output dropped by retention. Read `position` to resume on another client.
   */
  streamOutput(processId: string, options: StreamOutputOptions = {}): OutputStream {
    return new OutputStream(this.#streamContext(processId), processId, options);
  }

  /**
   * Attaches to a process: one WebSocket carrying its output (from `options.from`, as
   * `streamOutput`) and its stdin (`write`, `end`) and signals (`kill`). Dials at once; input
   * written before the socket opens is queued. Unlike `streamOutput` it does not re-dial (see
   * ProcessAttachment). Iterate it for the output; `close()` detaches.
   */
  attach(processId: string, options: AttachOptions = {}): ProcessAttachment {
    return new ProcessAttachment(this.#streamContext(processId), processId, options);
  }

  #streamContext(processId: string): StreamContext {
    return {
      transport: this.#transport,
      webSocket: this.#webSocket,
      probe: (call) =>
        this.#transport.request(
          {
            method: 'GET',
            path: instanceRoutes.process(processId),
            schema: ProcessInfoSchema,
            idempotent: true,
            retry: false,
          },
          call,
        ),
    };
  }
}
