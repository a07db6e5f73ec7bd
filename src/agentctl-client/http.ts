/**
 * The HTTP edge of the agentctl client: URL building, per-call timeouts and abort, failure
 * classification into typed errors, schema decoding of every response, and retries of idempotent calls.
 * Uses only web-standard APIs (fetch, AbortSignal, URL), so it runs in a browser too.
 * @module
 */
import type { z } from 'zod';
import { ErrorBodySchema } from '../protocol/index.js';
import type { ErrorCode } from '../protocol/index.js';
import {
  AgentctlHttpError,
  AgentctlTimeoutError,
  AgentctlUnreachableError,
  ProtocolError,
  isAgentctlHttpError,
} from './errors.js';
import type { RequestDescription } from './errors.js';
import { resolveRetryOptions, withRetry } from './retry.js';
import type { ResolvedRetryOptions, RetryOptions } from './retry.js';
import { sanitize } from '../shared/sanitize.js';

/** What the client reads of a response (a fetch Response has it all). */
interface FetchResponse {
  readonly ok: boolean;
  readonly status: number;
  text(): Promise<string>;
}

/** The subset of `fetch` the client uses; inject one to route through a proxy or an in-process app. */
export type FetchLike = (url: string, init: RequestInit) => Promise<FetchResponse>;

/** Longest message text kept from a server or a cause. */
const MAX_MESSAGE_LENGTH = 1024;

/** Default per-call timeout, in ms. */
const DEFAULT_TIMEOUT_MS = 10_000;

/** Options shared by the control and instance clients. */
export interface HttpClientOptions {
  /** Where agentctl (or a port-forward to it) listens, e.g. `http://127.0.0.1:8765`. */
  readonly baseUrl: string;
  /** @default globalThis.fetch */
  readonly fetch?: FetchLike;
  /** Per-call timeout in ms (each retry attempt gets its own). @default 10000 */
  readonly timeoutMs?: number;
  /** Backoff of idempotent calls. */
  readonly retry?: RetryOptions;
}

/** Options every call accepts. */
export interface CallOptions {
  /** Aborts the call (and its retries); the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Overrides the client's per-call timeout, in ms. */
  readonly timeoutMs?: number;
}

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';
type QueryValue = string | number | boolean | undefined;

/** One call, described once so URL, retry and decoding cannot disagree. */
interface RequestSpec<T> {
  readonly method: HttpMethod;
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>>;
  readonly body?: unknown;
  /** Response schema; absent when the body is ignored (the call resolves to `undefined`). */
  readonly schema?: z.ZodType<T>;
  /** Safe to repeat: retried on unreachable/timeout/502/503/504. */
  readonly idempotent: boolean;
  /** Extra values to redact from this call's errors (e.g. the handshake nonce). */
  readonly secrets?: readonly string[];
  /** Set false for a single attempt even when idempotent (probes that have their own loop). */
  readonly retry?: boolean;
  /** A 404 on a retry means an earlier attempt already did the work (DELETE). */
  readonly notFoundAfterRetryIsSuccess?: boolean;
}

/** Validates a base URL option and returns it without a trailing slash. */
export function normalizeBaseUrl(raw: string, option = 'baseUrl'): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError(`${option} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`${option} must use http or https`);
  if (url.search !== '' || url.hash !== '') throw new TypeError(`${option} must not have a query or fragment`);
  if (url.username !== '' || url.password !== '') throw new TypeError(`${option} must not contain credentials`);
  return url.href.replace(/\/+$/, '');
}

/** `base` + `path` + the defined query parameters. */
export function buildUrl(base: string, path: string, query?: Readonly<Record<string, QueryValue>>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined) params.set(key, String(value));
  }
  const qs = params.toString();
  return `${base}${path}${qs === '' ? '' : `?${qs}`}`;
}

/** The ws(s) URL of an http(s) URL. */
export function toWebSocketUrl(httpUrl: string): string {
  return httpUrl.replace(/^http(s?):/, 'ws$1:');
}

/** Positive integer check for timeouts and similar options. */
function checkPositive(value: number, option: string): number {
  if (!(Number.isFinite(value) && value > 0)) throw new TypeError(`${option} must be a positive number`);
  return value;
}

// Connection errors that prove the request never left the client.
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

/** The first `code` found on the error's `cause` chain (undici puts the socket error under `cause`). */
function causeCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The resolved state an HTTP client shares with every call: base URL, transport, auth headers. */
export class HttpTransport {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly retry: ResolvedRetryOptions;
  private readonly fetchImpl: FetchLike;

  constructor(
    options: HttpClientOptions,
    /** Headers added to every request (read per call: the token may change). */
    private readonly headers: () => Record<string, string>,
    /** Values redacted from every message (token, nonce). */
    private readonly secrets: () => readonly (string | undefined)[],
  ) {
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    this.timeoutMs = checkPositive(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'timeoutMs');
    this.retry = resolveRetryOptions(options.retry);
    if (options.fetch === undefined && typeof globalThis.fetch !== 'function') {
      throw new TypeError('fetch must be given where no global fetch exists');
    }
    // Bound so a global fetch is not called with the transport as `this` (browsers reject that).
    this.fetchImpl = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
  }

  /** Authorization and routing headers of every request and stream dial. */
  authHeaders(): Record<string, string> {
    return this.headers();
  }

  /** Removes the token, `extra` secrets and anything credential-shaped from `text`. */
  redact(text: string, extra: readonly string[] = []): string {
    return sanitize(text, { secrets: [...this.secrets(), ...extra], maxLength: MAX_MESSAGE_LENGTH });
  }

  url(path: string, query?: Readonly<Record<string, QueryValue>>): string {
    return buildUrl(this.baseUrl, path, query);
  }

  /** Sends `spec`, retrying when it is idempotent, and returns the decoded body. */
  request<T>(spec: RequestSpec<T>, call: CallOptions = {}): Promise<T> {
    const timeoutMs = checkPositive(call.timeoutMs ?? this.timeoutMs, 'timeoutMs');
    if (!spec.idempotent || spec.retry === false) return this.attempt(spec, call.signal, timeoutMs);
    return withRetry(
      this.retry,
      async (n) => {
        try {
          return await this.attempt(spec, call.signal, timeoutMs);
        } catch (err) {
          if (n > 1 && spec.notFoundAfterRetryIsSuccess === true && isAgentctlHttpError(err) && err.status === 404) {
            return undefined as T;
          }
          throw err;
        }
      },
      call.signal,
    );
  }

  private async attempt<T>(spec: RequestSpec<T>, callerSignal: AbortSignal | undefined, timeoutMs: number): Promise<T> {
    callerSignal?.throwIfAborted();
    const req: RequestDescription = { method: spec.method, path: spec.path };
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = callerSignal === undefined ? timeout : AbortSignal.any([callerSignal, timeout]);
    const headers: Record<string, string> = { accept: 'application/json', ...this.headers() };
    let body: string | undefined;
    if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.body);
    }
    let response: FetchResponse;
    let text: string;
    try {
      response = await this.fetchImpl(this.url(spec.path, spec.query), { method: spec.method, headers, body, signal });
    } catch (err) {
      throw this.transportError(req, spec, err, { timeout, timeoutMs, callerSignal, responded: false });
    }
    try {
      text = await response.text();
    } catch (err) {
      throw this.transportError(req, spec, err, { timeout, timeoutMs, callerSignal, responded: true });
    }
    if (!response.ok) throw this.httpError(req, spec, response.status, text);
    return this.decode(req, spec, text);
  }

  private transportError(
    req: RequestDescription,
    spec: RequestSpec<unknown>,
    err: unknown,
    ctx: { timeout: AbortSignal; timeoutMs: number; callerSignal: AbortSignal | undefined; responded: boolean },
  ): unknown {
    // The caller's own abort is not a failure of agentctl: hand back the caller's reason untouched.
    if (ctx.callerSignal?.aborted) return ctx.callerSignal.reason;
    if (ctx.timeout.aborted) {
      return new AgentctlTimeoutError(req, { timeoutMs: ctx.timeoutMs, mayHaveBeenApplied: !spec.idempotent, cause: err });
    }
    const code = causeCode(err);
    const sent = ctx.responded || code === undefined || !NOT_SENT_CODES.has(code);
    const message = err instanceof Error ? err.message : String(err);
    const detail = this.redact(code === undefined ? message : `${message} (${code})`, spec.secrets);
    return new AgentctlUnreachableError(req, detail, { mayHaveBeenApplied: !spec.idempotent && sent, cause: err });
  }

  private httpError(req: RequestDescription, spec: RequestSpec<unknown>, status: number, text: string): AgentctlHttpError {
    let code: ErrorCode | undefined;
    let serverMessage: string;
    let errno: string | undefined;
    const parsed = ErrorBodySchema.safeParse(safeJson(text));
    if (parsed.success) {
      code = parsed.data.error.code;
      serverMessage = parsed.data.error.message;
      errno = parsed.data.error.errno;
    } else {
      serverMessage = text.trim() === '' ? '(empty body)' : text.trim().slice(0, 200);
    }
    return new AgentctlHttpError(req, {
      status,
      code,
      serverMessage: this.redact(serverMessage, spec.secrets),
      mayHaveBeenApplied: !spec.idempotent && status >= 500,
      ...(errno === undefined ? {} : { errno }),
    });
  }

  private decode<T>(req: RequestDescription, spec: RequestSpec<T>, text: string): T {
    if (spec.schema === undefined) return undefined as T;
    const json = safeJson(text);
    // No cause here on purpose: a JSON SyntaxError quotes the body, which may carry the token.
    if (json === NOT_JSON) throw new ProtocolError(req, 'body is not JSON');
    const parsed = spec.schema.safeParse(json);
    if (!parsed.success) throw new ProtocolError(req, this.redact(describeIssues(parsed.error), spec.secrets), { cause: parsed.error });
    return parsed.data;
  }
}

const NOT_JSON: unique symbol = Symbol('not json');

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

/** The first few schema issues as `path: message` (zod issues carry no input values). */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length === 0 ? '(root)' : issue.path.join('.')}: ${issue.message}`)
    .join('; ');
}
