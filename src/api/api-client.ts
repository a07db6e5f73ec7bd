/**
 * Typed client for the Berth HTTP API (fetch + WebSocket). Browser-safe: no Node APIs; Node
 * callers inject a WebSocket factory (the CLI uses `ws`, see `clientForDataDir` in src/server).
 *
 * @example
 * const berth = new BerthClient({ baseUrl: 'http://127.0.0.1:7420', token });
 * const session = await berth.launch({ repository: { path: '/src/app' }, agent: 'demo' });
 * for await (const e of berth.events(session.id)) console.log(e);
 * @example In the dashboard (cookie mode: no token; the CSRF token from the login goes with every request)
 * const berth = new BerthClient({ baseUrl: location.origin, token: null });
 * const { csrf } = await berth.dashboardLogin(code); // remembered; keep it to build the next page's client
 * await new BerthClient({ baseUrl: location.origin, token: null, csrf }).dashboardSession(); // 401 once the session is gone
 * @module
 */
import type { z } from 'zod';
import { AcpSessionClient } from './acp-client.js';
import { EgressClient } from './egress-client.js';
import { PoolClient } from './pool-client.js';
import { BerthApiError, ControllerUnreachableError, STATUS_OF, StreamBrokenError } from './errors.js';
import { apiRoutes } from './routes.js';
import {
  DashboardCodeSchema,
  DashboardSessionSchema,
  DashboardSessionStateSchema,
  ErrorBodySchema,
  ExecMessageSchema,
  HealthSchema,
  LaunchOptionsSchema,
  LogMessageSchema,
  SessionEventSchema,
  SessionListSchema,
  SessionViewSchema,
  SHELL_STDIN_CHUNK_BYTES,
  ShellServerMessageSchema,
  type DashboardCode,
  type DashboardSession,
  type DashboardSessionState,
  type Health,
  type LaunchOptions,
  type LaunchRequest,
  type SessionEvent,
  type SessionView,
  type ShellClientMessage,
} from './schemas.js';
import { base64ToBytes, bytesToBase64, readNdjson, readSse } from './streams.js';

/** The subset of the WHATWG WebSocket the client uses (the browser's and `ws` both fit). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

/** Opens a WebSocket; `headers` carries the Authorization header where the runtime allows it. */
type WebSocketFactory = (url: string, headers: Record<string, string>) => WebSocketLike;

/** What the client reads of a response (a fetch Response has it all). */
interface ApiResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly body: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
  json(): Promise<unknown>;
}

/** The subset of `fetch` the client calls (Node's CLI passes one on node:http: no undici to load). */
type ApiFetch = (url: string, init: RequestInit) => Promise<ApiResponse>;

interface BerthClientOptions {
  /** e.g. `http://127.0.0.1:7420` */
  baseUrl: string;
  /**
   * The bearer token; null in the dashboard, which authenticates with its HttpOnly cookie instead
   * together with its CSRF token (fetch then sends `credentials: 'same-origin'`).
   */
  token: string | null;
  /**
   * The dashboard cookie session's CSRF token (the answer of `dashboardLogin`, which sets it too):
   * sent as `x-berth-csrf` on every request, and as `?csrf=` on the browser's shell WebSocket.
   * The server refuses the cookie without it.
   */
  csrf?: string | null;
  /** @default globalThis.fetch */
  fetch?: ApiFetch;
  /** @default the global WebSocket, with the token passed as `?token=` (browsers cannot set headers) */
  webSocket?: WebSocketFactory;
  /** Deadline of unary calls, in ms. @default 120000 */
  timeoutMs?: number;
}

/** One chunk of output, decoded. */
interface OutputChunk {
  seq: number;
  stream: 'stdout' | 'stderr';
  data: Uint8Array;
}

interface ExecParams {
  argv: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** The whole stdin of the command. */
  stdin?: Uint8Array;
}

interface ExitResult { exitCode: number | null; signal: string | null }

interface ShellConnection {
  write(data: Uint8Array): void;
  resize(rows: number, cols: number): void;
  close(): void;
  /** Settles when the shell exits (rejects on an error message or a dropped connection). */
  readonly done: Promise<ExitResult>;
}

export class BerthClient {
  readonly #base: string;
  readonly #token: string | null;
  #csrf: string | null;
  readonly #fetch: ApiFetch;
  readonly #ws: WebSocketFactory | undefined;
  readonly #timeoutMs: number;
  /** ACP sessions (cancel a turn, answer permission requests, read typed events), the warm pools, a session's egress records. */
  readonly acp: AcpSessionClient;
  readonly pools = new PoolClient({ json: (method, path, schema, o) => this.#json(method, path, schema, o) });
  readonly egress = new EgressClient({ json: (method, path, schema, o) => this.#json(method, path, schema, o) });

  constructor(opts: BerthClientOptions) {
    if (!opts.baseUrl) throw new TypeError('BerthClient: baseUrl is required');
    this.#base = opts.baseUrl.replace(/\/+$/, '');
    this.#token = opts.token;
    this.#csrf = opts.csrf ?? null;
    this.#fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.#ws = opts.webSocket;
    this.#timeoutMs = opts.timeoutMs ?? 120_000;
    this.acp = new AcpSessionClient({ json: (method, path, schema, o) => this.#json(method, path, schema, o), request: (method, path) => this.#request(method, path, {}) });
  }

  /** The server's base URL, as given (without a trailing slash). */
  get baseUrl(): string {
    return this.#base;
  }

  health(signal?: AbortSignal): Promise<Health> {
    return this.#json('GET', apiRoutes.health, HealthSchema, { signal });
  }

  /** The server's OpenAPI 3.1 document. */
  async openapi(): Promise<Record<string, unknown>> {
    const res = await this.#request('GET', apiRoutes.openapi, {});
    return (await res.json()) as Record<string, unknown>;
  }

  launch(req: LaunchRequest): Promise<SessionView> {
    return this.#json('POST', apiRoutes.sessions, SessionViewSchema, { body: req });
  }

  async list(): Promise<SessionView[]> {
    return (await this.#json('GET', apiRoutes.sessions, SessionListSchema, {})).sessions;
  }

  get(id: string): Promise<SessionView> {
    return this.#json('GET', apiRoutes.session(id), SessionViewSchema, {});
  }

  stop(id: string): Promise<SessionView> {
    return this.#json('POST', apiRoutes.stop(id), SessionViewSchema, {});
  }

  resume(id: string): Promise<SessionView> {
    return this.#json('POST', apiRoutes.resume(id), SessionViewSchema, {});
  }

  async remove(id: string, opts: { force?: boolean } = {}): Promise<void> {
    await this.#request('DELETE', `${apiRoutes.session(id)}${opts.force ? '?force=true' : ''}`, {});
  }

  /** Live events of one session; the current state and stages come first. Ends when `signal` aborts. */
  async *events(id: string, opts: { signal?: AbortSignal } = {}): AsyncGenerator<SessionEvent> {
    const res = await this.#request('GET', apiRoutes.events(id), { signal: opts.signal, stream: true });
    try {
      for await (const { data } of readSse(res.body!)) yield SessionEventSchema.parse(JSON.parse(data));
    } catch (err) {
      if (opts.signal?.aborted) return;
      throw err;
    }
  }

  /** The agent's output from `from`; with `follow`, until the agent exits; with `previous`, of the run before. */
  async *logs(id: string, opts: { from?: number; follow?: boolean; previous?: boolean; signal?: AbortSignal } = {}): AsyncGenerator<OutputChunk> {
    const q = new URLSearchParams();
    if (opts.from !== undefined) q.set('from', String(opts.from));
    if (opts.follow) q.set('follow', 'true');
    if (opts.previous) q.set('previous', 'true');
    const qs = q.size > 0 ? `?${q.toString()}` : '';
    const res = await this.#request('GET', `${apiRoutes.logs(id)}${qs}`, { signal: opts.signal, stream: true });
    try {
      for await (const raw of readNdjson(res.body!)) {
        const m = LogMessageSchema.parse(raw);
        if (m.type === 'end') return;
        if (m.type === 'ping') continue;
        if (m.type === 'error') throw new BerthApiError(STATUS_OF[m.error.code], m.error.code, m.error.message);
        yield { seq: m.chunk.seq, stream: m.chunk.stream, data: base64ToBytes(m.chunk.data) };
      }
    } catch (err) {
      if (opts.signal?.aborted) return;
      throw err;
    }
    // The server always ends a log stream with `end` (or `error`): without it the connection was cut.
    if (!opts.signal?.aborted) throw new StreamBrokenError('the log stream ended without its end marker (the connection to berth serve was cut)');
  }

  /** Live events of every session: first the current state of each, then events as they happen (`removed` ends a session). */
  async *allEvents(opts: { signal?: AbortSignal } = {}): AsyncGenerator<SessionEvent> {
    const res = await this.#request('GET', apiRoutes.allEvents, { signal: opts.signal, stream: true });
    try {
      for await (const { data } of readSse(res.body!)) yield SessionEventSchema.parse(JSON.parse(data));
    } catch (err) {
      if (opts.signal?.aborted) return;
      throw err;
    }
  }

  /** What a launch may name (agents, executors/profiles with their type) and the defaults, from the server's config. */
  launchOptions(): Promise<LaunchOptions> {
    return this.#json('GET', apiRoutes.launchOptions, LaunchOptionsSchema, {});
  }

  /** A one-time dashboard login code (bearer token only; valid 5 minutes, once). */
  createDashboardCode(): Promise<DashboardCode> {
    return this.#json('POST', apiRoutes.dashboardCodes, DashboardCodeSchema, {});
  }

  /** Exchanges a login code for the session cookie (set by the browser); remembers and returns the CSRF token. 401 for a used or expired code. */
  async dashboardLogin(code: string): Promise<DashboardSession> {
    const session = await this.#json('POST', apiRoutes.dashboardLogin, DashboardSessionSchema, { body: { code } });
    this.#csrf = session.csrf;
    return session;
  }

  /** Whether the cookie session (with the CSRF token given) is live: BerthApiError 401 when not. */
  dashboardSession(): Promise<DashboardSessionState> {
    return this.#json('GET', apiRoutes.dashboardSession, DashboardSessionStateSchema, {});
  }

  /** Ends the cookie session (the cookie is cleared). */
  async dashboardLogout(): Promise<void> {
    await this.#request('POST', apiRoutes.dashboardLogout, {});
    this.#csrf = null;
  }

  /** Runs a command in the workspace, streaming its output to `onOutput`; resolves with how it ended. */
  async exec(
    id: string,
    params: ExecParams,
    opts: { onOutput?: (chunk: OutputChunk) => void; signal?: AbortSignal } = {},
  ): Promise<ExitResult> {
    const body = {
      argv: params.argv,
      ...(params.cwd !== undefined ? { cwd: params.cwd } : {}),
      ...(params.env !== undefined ? { env: params.env } : {}),
      ...(params.stdin !== undefined ? { stdin: bytesToBase64(params.stdin) } : {}),
    };
    const res = await this.#request('POST', apiRoutes.exec(id), { body, signal: opts.signal, stream: true });
    for await (const raw of readNdjson(res.body!)) {
      const m = ExecMessageSchema.parse(raw);
      switch (m.type) {
        case 'output':
          opts.onOutput?.({ seq: m.chunk.seq, stream: m.chunk.stream, data: base64ToBytes(m.chunk.data) });
          break;
        case 'exit':
          return { exitCode: m.exitCode, signal: m.signal };
        case 'error':
          throw new BerthApiError(STATUS_OF[m.error.code], m.error.code, m.error.message);
        case 'ping':
          break;
      }
    }
    throw new StreamBrokenError('the exec stream ended without an exit status');
  }

  /** Writes `data` (UTF-8, as is) to the agent's stdin; `eof` closes it afterwards. 409 unless the agent runs. */
  async sendInput(id: string, data: string, opts: { eof?: boolean } = {}): Promise<void> {
    await this.#request('POST', apiRoutes.input(id), { body: { data, ...(opts.eof ? { eof: true } : {}) } });
  }

  /** Opens an interactive shell (a PTY in the workspace). */
  shell(
    id: string,
    opts: { rows: number; cols: number; term?: string; onOutput: (chunk: OutputChunk) => void },
  ): ShellConnection {
    const q = new URLSearchParams({ rows: String(opts.rows), cols: String(opts.cols) });
    if (opts.term) q.set('term', opts.term);
    const url = `${this.#base.replace(/^http/, 'ws')}${apiRoutes.shell(id)}?${q.toString()}`;
    const token = this.#token;
    const csrf = this.#csrf;
    // A browser's WebSocket cannot send headers: the credential then rides in the query.
    const ws = this.#ws
      ? this.#ws(url, token !== null ? { authorization: `Bearer ${token}` } : csrf !== null ? { 'x-berth-csrf': csrf } : {})
      : (new WebSocket(
          token !== null ? `${url}&token=${encodeURIComponent(token)}` : csrf !== null ? `${url}&csrf=${encodeURIComponent(csrf)}` : url,
        ) as unknown as WebSocketLike);
    const queue: string[] = [];
    const send = (m: ShellClientMessage): void => {
      const text = JSON.stringify(m);
      if (ws.readyState === 1) ws.send(text);
      else if (ws.readyState === 0) queue.push(text);
    };
    const done = new Promise<ExitResult>((resolve, reject) => {
      let result: ExitResult | undefined;
      let failure: Error | undefined;
      let opened = false;
      ws.onopen = () => {
        opened = true;
        for (const text of queue.splice(0)) ws.send(text);
      };
      ws.onmessage = (ev) => {
        const m = ShellServerMessageSchema.parse(JSON.parse(typeof ev.data === 'string' ? ev.data : String(ev.data)));
        if (m.type === 'output') opts.onOutput({ seq: m.chunk.seq, stream: m.chunk.stream, data: base64ToBytes(m.chunk.data) });
        else if (m.type === 'exit') result = { exitCode: m.exitCode, signal: m.signal };
        else failure = new BerthApiError(STATUS_OF[m.error.code], m.error.code, m.error.message);
      };
      ws.onerror = (ev) => {
        // `ws` hands its Error over (a TLS verification failure, say): kept as the cause
        const cause = (ev as { error?: unknown } | null)?.error;
        failure ??= opened ? new StreamBrokenError('the shell connection failed', { cause }) : new ControllerUnreachableError(this.#base, { cause });
      };
      ws.onclose = (ev) => {
        if (result) resolve(result);
        else reject(failure ?? new StreamBrokenError(`the shell connection closed before the shell exited (code ${ev.code})`));
      };
    });
    return {
      // A paste can be larger than one frame may be: split it, in order.
      write: (data) => {
        for (let i = 0; i < data.length; i += SHELL_STDIN_CHUNK_BYTES) send({ type: 'stdin', data: bytesToBase64(data.subarray(i, i + SHELL_STDIN_CHUNK_BYTES)) });
      },
      resize: (rows, cols) => send({ type: 'resize', rows, cols }),
      close: () => ws.close(1000),
      done,
    };
  }

  async #json<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S,
    opts: { body?: unknown; signal?: AbortSignal | undefined },
  ): Promise<z.infer<S>> {
    const res = await this.#request(method, path, opts);
    return schema.parse(await res.json());
  }

  /** Sends a request; throws BerthApiError for non-2xx and ControllerUnreachableError when nothing answers. */
  async #request(
    method: string,
    path: string,
    opts: { body?: unknown; signal?: AbortSignal | undefined; stream?: boolean },
  ): Promise<ApiResponse> {
    const url = `${this.#base}${path}`;
    const signals = [opts.signal, opts.stream ? undefined : AbortSignal.timeout(this.#timeoutMs)].filter(
      (s): s is AbortSignal => s !== undefined,
    );
    let res: ApiResponse;
    try {
      res = await this.#fetch(url, {
        method,
        headers: {
          ...(this.#token !== null ? { authorization: `Bearer ${this.#token}` } : {}),
          ...(this.#csrf !== null ? { 'x-berth-csrf': this.#csrf } : {}),
          ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(this.#token === null ? { credentials: 'same-origin' as const } : {}),
        ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
        ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
      });
    } catch (err) {
      if ((err as Error).name === 'AbortError' || (err as Error).name === 'TimeoutError') throw err;
      throw new ControllerUnreachableError(this.#base, { cause: err });
    }
    if (!res.ok) {
      const text = await res.text();
      let parsed: ReturnType<typeof ErrorBodySchema.safeParse> | undefined;
      try {
        parsed = ErrorBodySchema.safeParse(JSON.parse(text));
      } catch {
        parsed = undefined;
      }
      if (parsed?.success) throw new BerthApiError(res.status, parsed.data.error.code, parsed.data.error.message, parsed.data.error.field);
      throw new BerthApiError(res.status, res.status === 401 ? 'unauthorized' : 'internal', `HTTP ${res.status}: ${text.slice(0, 200)}`);
    }
    return res;
  }
}
