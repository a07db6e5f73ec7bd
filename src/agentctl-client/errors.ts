/**
 * Typed errors of the agentctl client: one class per failure the caller can act on.
 * Messages name the HTTP method and route path (never the query, token or nonce) and are sanitized.
 * @module
 */
import type { ErrorCode } from '../protocol/index.js';

/** The request a failure belongs to. `path` is the route path without its query string. */
export interface RequestDescription {
  readonly method: string;
  readonly path: string;
}

/** Base class of every error thrown by the agentctl client. */
abstract class AgentctlError extends Error {
  /** HTTP method of the failed call (`WS` for the output stream). */
  readonly method: string;
  /** Route path of the failed call, without query string. */
  readonly path: string;

  protected constructor(request: RequestDescription, message: string, options?: { cause?: unknown }) {
    super(`agentctl ${request.method} ${request.path}: ${message}`, options);
    this.method = request.method;
    this.path = request.path;
  }
}

/** Thrown when agentctl answers with a non-2xx status. */
export class AgentctlHttpError extends AgentctlError {
  override readonly name = 'AgentctlHttpError';
  readonly status: number;
  /** The protocol error code, when the body was a valid error envelope (a proxy's 502 may not be). */
  readonly code: ErrorCode | undefined;
  /** The server's (sanitized) error message. */
  readonly serverMessage: string;
  /** True when a non-idempotent call got a 5xx: the change may exist; reconcile by reading. */
  readonly mayHaveBeenApplied: boolean;
  /** For `spawn_failed`: the errno of the spawn (`ENOENT`, `EACCES`, …; `UNKNOWN` if agentctl sent none). */
  readonly errno: string | undefined;

  constructor(
    request: RequestDescription,
    fields: { status: number; code: ErrorCode | undefined; serverMessage: string; mayHaveBeenApplied: boolean; errno?: string },
  ) {
    const code = fields.code === undefined ? '' : ` ${fields.code}`;
    super(request, `status ${fields.status}${code}: ${fields.serverMessage}`);
    this.status = fields.status;
    this.code = fields.code;
    this.serverMessage = fields.serverMessage;
    this.mayHaveBeenApplied = fields.mayHaveBeenApplied;
    this.errno = fields.code === 'spawn_failed' ? (fields.errno ?? 'UNKNOWN') : fields.errno;
  }
}

/** agentctl could not start the requested command; `errno` says why (`ENOENT`: not found, `EACCES`: not executable, …). */
type SpawnFailedError = AgentctlHttpError & { readonly code: 'spawn_failed'; readonly errno: string };

/** Thrown when agentctl cannot be reached: connection refused or reset, DNS failure, socket closed. */
export class AgentctlUnreachableError extends AgentctlError {
  override readonly name = 'AgentctlUnreachableError';
  /** True when a non-idempotent request may have reached agentctl before the failure. */
  readonly mayHaveBeenApplied: boolean;

  constructor(request: RequestDescription, detail: string, fields: { mayHaveBeenApplied: boolean; cause?: unknown }) {
    super(request, `unreachable: ${detail}`, { cause: fields.cause });
    this.mayHaveBeenApplied = fields.mayHaveBeenApplied;
  }
}

/** Thrown when a call does not complete within its timeout. */
export class AgentctlTimeoutError extends AgentctlError {
  override readonly name = 'AgentctlTimeoutError';
  readonly timeoutMs: number;
  /** True for non-idempotent calls: the request was sent and may have been applied. */
  readonly mayHaveBeenApplied: boolean;

  constructor(request: RequestDescription, fields: { timeoutMs: number; mayHaveBeenApplied: boolean; cause?: unknown }) {
    super(request, `timed out after ${fields.timeoutMs}ms`, { cause: fields.cause });
    this.timeoutMs = fields.timeoutMs;
    this.mayHaveBeenApplied = fields.mayHaveBeenApplied;
  }
}

/** Thrown when a response (or stream message) is not valid JSON or does not match the protocol schema. */
export class ProtocolError extends AgentctlError {
  override readonly name = 'ProtocolError';

  constructor(request: RequestDescription, detail: string, options?: { cause?: unknown }) {
    super(request, `unexpected response: ${detail}`, options);
  }
}

/** Thrown by an output stream when agentctl sends a non-transient `error` message. */
export class AgentctlStreamError extends AgentctlError {
  override readonly name = 'AgentctlStreamError';
  /** The error code sent by agentctl (usually one of the protocol's ERROR_CODES). */
  readonly code: string;
  readonly serverMessage: string;

  constructor(request: RequestDescription, fields: { code: string; serverMessage: string }) {
    super(request, `stream error ${fields.code}: ${fields.serverMessage}`);
    this.code = fields.code;
    this.serverMessage = fields.serverMessage;
  }
}

/** Why an ambiguous create could not be accepted after re-reading the instance. */
type ReconcileFailure = 'workspace_mismatch' | 'read_failed';

/**
 * Thrown by createInstance when the create was ambiguous (timeout, reset, 5xx) and re-reading the
 * instance did not prove it was created as requested. `cause` is the original create error.
 */
export class AgentctlReconcileError extends AgentctlError {
  override readonly name = 'AgentctlReconcileError';
  readonly instanceId: string;
  readonly reason: ReconcileFailure;
  /** The error of the reconciling read, when `reason` is `read_failed`. */
  readonly readError: unknown;

  constructor(
    request: RequestDescription,
    fields: { instanceId: string; reason: ReconcileFailure; cause: unknown; readError?: unknown },
  ) {
    const what =
      fields.reason === 'workspace_mismatch'
        ? 'existing instance workspace does not match the request'
        : 'could not re-read the instance';
    super(request, `reconcile ambiguous create of instance ${fields.instanceId}: ${what}`, { cause: fields.cause });
    this.instanceId = fields.instanceId;
    this.reason = fields.reason;
    this.readError = fields.readError;
  }
}

// Guards compare `name` as well as the prototype so they survive duplicate copies of this module.
function hasName(err: unknown, name: string): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === name;
}

export function isAgentctlHttpError(err: unknown): err is AgentctlHttpError {
  return err instanceof AgentctlHttpError || hasName(err, 'AgentctlHttpError');
}
/** True when agentctl answered `spawn_failed`: the command could not be started (see `errno`). */
export function isSpawnFailedError(err: unknown): err is SpawnFailedError {
  return isAgentctlHttpError(err) && err.code === 'spawn_failed' && typeof err.errno === 'string';
}
export function isAgentctlUnreachableError(err: unknown): err is AgentctlUnreachableError {
  return err instanceof AgentctlUnreachableError || hasName(err, 'AgentctlUnreachableError');
}
export function isAgentctlTimeoutError(err: unknown): err is AgentctlTimeoutError {
  return err instanceof AgentctlTimeoutError || hasName(err, 'AgentctlTimeoutError');
}
export function isProtocolError(err: unknown): err is ProtocolError {
  return err instanceof ProtocolError || hasName(err, 'ProtocolError');
}
function isAgentctlStreamError(err: unknown): err is AgentctlStreamError {
  return err instanceof AgentctlStreamError || hasName(err, 'AgentctlStreamError');
}
function isAgentctlReconcileError(err: unknown): err is AgentctlReconcileError {
  return err instanceof AgentctlReconcileError || hasName(err, 'AgentctlReconcileError');
}

/** True for any error thrown by this client. */
export function isAgentctlError(err: unknown): err is AgentctlError {
  return (
    err instanceof AgentctlError ||
    isAgentctlHttpError(err) ||
    isAgentctlUnreachableError(err) ||
    isAgentctlTimeoutError(err) ||
    isProtocolError(err) ||
    isAgentctlStreamError(err) ||
    isAgentctlReconcileError(err)
  );
}

/** True when the failed call may have changed state on agentctl and the caller should reconcile by reading. */
export function mayHaveBeenApplied(err: unknown): boolean {
  if (isAgentctlHttpError(err) || isAgentctlUnreachableError(err) || isAgentctlTimeoutError(err)) {
    return err.mayHaveBeenApplied;
  }
  return false;
}
