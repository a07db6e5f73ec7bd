/**
 * One error type for everything the Kubernetes API layer can throw: client-node's `ApiException`
 * (HTTP status + a v1 Status as JSON text), node-fetch network errors, timeouts and aborts. The
 * message is sanitized (it may leave the process); the original error stays in `cause`.
 * @module
 */
import { ApiException } from '@kubernetes/client-node';
import type { V1Status, V1StatusDetails } from '@kubernetes/client-node';
import { sanitize } from '../../../shared/sanitize.js';

/**
 * Why a call failed. API failures carry the v1 Status `reason` (`NotFound`, `AlreadyExists`,
 * `Conflict`, `Forbidden`, `Invalid`, `Timeout`, `ServerTimeout`, `BadRequest`, `InternalError` …);
 * failures without a Status get one of the last four.
 */
type KubeErrorReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Forbidden'
  | 'Unauthorized'
  | 'Invalid'
  | 'BadRequest'
  | 'Gone'
  | 'Timeout'
  | 'ServerTimeout'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  /** The request timeout (`request_timeout_seconds`) ran out on our side. */
  | 'ClientTimeout'
  /** The caller's AbortSignal fired. */
  | 'Aborted'
  /** No HTTP response: connection refused/reset, DNS, TLS. */
  | 'NetworkError'
  | 'Unknown'
  | (string & {});

/** Thrown by every `kube/` function when the API server (or the way to it) fails. */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  /** HTTP status; undefined when no response arrived (network error, timeout, abort). */
  readonly status: number | undefined;
  readonly reason: KubeErrorReason;
  /** The Status `details` (name, kind, causes) when the server sent them. */
  readonly details: V1StatusDetails | undefined;
  /** Node system error code for network failures (`ECONNREFUSED`, `ECONNRESET` …). */
  readonly networkCode: string | undefined;

  constructor(
    message: string,
    fields: { status?: number; reason: KubeErrorReason; details?: V1StatusDetails; networkCode?: string; cause?: unknown },
  ) {
    super(sanitize(message), fields.cause === undefined ? undefined : { cause: fields.cause });
    this.status = fields.status;
    this.reason = fields.reason;
    this.details = fields.details;
    this.networkCode = fields.networkCode;
  }
}

/** Thrown when the client configuration (kubeconfig, context, in-cluster files) cannot be loaded. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(sanitize(message), options);
  }
}

const REASON_BY_STATUS: Record<number, KubeErrorReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Gone',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** Parses a v1 Status from an ApiException body (client-node 1.4.0 keeps the raw response text). */
export function statusFromBody(body: unknown): V1Status | undefined {
  let value: unknown = body;
  if (typeof body === 'string') {
    if (body.trim() === '') return undefined;
    try {
      value = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  if (value === null || typeof value !== 'object') return undefined;
  const status = value as V1Status & { kind?: unknown };
  return status.kind === 'Status' || typeof status.reason === 'string' || typeof status.message === 'string' ? status : undefined;
}

/**
 * Turns anything thrown by a client-node call into a KubeApiError whose message is
 * `<action>: <what the server said>` (e.g. `create pod ns/x: pods "x" already exists`).
 * `timeoutSignal` tells a request timeout apart from the caller's abort.
 */
export function toKubeApiError(err: unknown, action: string, opts: { timeoutSignal?: AbortSignal } = {}): KubeApiError {
  if (err instanceof KubeApiError) return err;
  if (err instanceof ApiException) {
    const status = statusFromBody(err.body);
    const code = err.code;
    const reason: KubeErrorReason = status?.reason || REASON_BY_STATUS[code] || (code >= 500 ? 'InternalError' : 'Unknown');
    // Never use ApiException.message: it embeds the response headers.
    const text = status?.message || (code === 401 ? 'Unauthorized (check the credentials of the kubeconfig user)' : `HTTP ${code}`);
    return new KubeApiError(`${action}: ${text}`, { status: code, reason, details: status?.details, cause: err });
  }
  if (isAbortError(err)) {
    if (opts.timeoutSignal?.aborted) {
      return new KubeApiError(`${action}: no answer from the API server within the request timeout`, { reason: 'ClientTimeout', cause: err });
    }
    return new KubeApiError(`${action}: aborted`, { reason: 'Aborted', cause: err });
  }
  const statusCode = numberField(err, 'statusCode');
  if (statusCode !== undefined) {
    // Watch failures: a plain Error with the HTTP status text and `.statusCode`.
    const reason = REASON_BY_STATUS[statusCode] ?? (statusCode >= 500 ? 'InternalError' : 'Unknown');
    return new KubeApiError(`${action}: HTTP ${statusCode} ${messageOf(err)}`, { status: statusCode, reason, cause: err });
  }
  const networkCode = stringField(err, 'code');
  if (networkCode !== undefined || stringField(err, 'type') === 'system') {
    return new KubeApiError(`${action}: cannot reach the API server: ${messageOf(err)}`, { reason: 'NetworkError', networkCode, cause: err });
  }
  return new KubeApiError(`${action}: ${messageOf(err)}`, { reason: 'Unknown', cause: err });
}

function isAbortError(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || stringField(err, 'type') === 'aborted' || err.name === 'TimeoutError');
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function numberField(err: unknown, key: string): number | undefined {
  if (err === null || typeof err !== 'object' || !(key in err)) return undefined;
  const value = (err as Record<string, unknown>)[key];
  return typeof value === 'number' ? value : undefined;
}

function stringField(err: unknown, key: string): string | undefined {
  if (err === null || typeof err !== 'object' || !(key in err)) return undefined;
  const value = (err as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

function kubeError(err: unknown): KubeApiError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof KubeApiError) return e;
  }
  return undefined;
}

/** 404, or a NotFound Status. */
export function isNotFound(err: unknown): boolean {
  const e = kubeError(err);
  return e !== undefined && (e.status === 404 || e.reason === 'NotFound');
}

/** 409 Conflict: a failed precondition or a resourceVersion conflict (not AlreadyExists). */
export function isConflict(err: unknown): boolean {
  const e = kubeError(err);
  return e !== undefined && e.status === 409 && e.reason !== 'AlreadyExists';
}

export function isAlreadyExists(err: unknown): boolean {
  return kubeError(err)?.reason === 'AlreadyExists';
}

export function isForbidden(err: unknown): boolean {
  const e = kubeError(err);
  return e !== undefined && (e.status === 403 || e.reason === 'Forbidden');
}

/** 410 Gone / `Expired`: a watch's resourceVersion is too old; relist. */
export function isGone(err: unknown): boolean {
  const e = kubeError(err);
  return e !== undefined && (e.status === 410 || e.reason === 'Gone' || e.reason === 'Expired');
}
