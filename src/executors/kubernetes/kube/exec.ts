/**
 * Runs one command in a container over the exec WebSocket (client-node `Exec`): stdin delivered
 * completely and then closed, the tails of stdout/stderr, and the exit code from the final v1 Status.
 * A container that does not accept execs yet is told apart from a command that fails, so the
 * launch can poll exec readiness instead of waiting for the Running status.
 * @module
 */
import { constants as osConstants } from 'node:os';
import { PassThrough, Writable } from 'node:stream';
import type { Readable } from 'node:stream';
import { Exec } from '@kubernetes/client-node';
import type { V1Status } from '@kubernetes/client-node';
import type WebSocket from 'ws';
import { sanitize } from '../../../shared/sanitize.js';
import type { KubeClient } from './client.js';
import type { KubeApiError } from './errors.js';
import { streamConnector, unwrapSocketError } from './websocket.js';

const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;
/** Only v5 can close stdin alone (a CLOSE frame); older protocols close the whole socket. */
const STDIN_CLOSE_PROTOCOL = 'v5.channel.k8s.io';
/** `reason` of the error for an API server too old to close an exec's stdin: no retry helps. */
export const SUBPROTOCOL_UNSUPPORTED = 'SubprotocolUnsupported';
/** Stop feeding stdin while this much is queued on the socket (keeps memory bounded). */
const STDIN_HIGH_WATER = 4 * 1024 * 1024;
/** Largest stdin WebSocket message. */
const STDIN_SLICE = 256 * 1024;

type ExecStdin = Buffer | Iterable<Buffer> | AsyncIterable<Buffer> | Readable;

export interface ExecOptions {
  namespace: string;
  pod: string;
  container: string;
  command: readonly string[];
  /** Sent in order, then stdin is closed (EOF). Omit for a command without stdin. */
  stdin?: ExecStdin;
  /** Ends the exec (the socket is terminated); the command may keep running in the container. */
  signal?: AbortSignal;
  /** How much of the end of stdout and of stderr is kept. @default 64 KiB each */
  maxOutputBytes?: number;
  /**
   * Called once, when the command's first stdout byte arrives: the proof that it runs (an open
   * stream is not: the runtime may still answer "container not running" on it). A command that
   * prints first thing can tell "never started, try again" from "may have run" this way.
   */
  onFirstStdout?: () => void;
  /** Called with every stdout chunk as it arrives (after `onFirstStdout` for the first one). */
  onStdout?: (chunk: Buffer) => void;
  /** Keep-alive ping interval of the socket. @default PING_INTERVAL_MS (20 s) */
  pingIntervalMs?: number;
}

export interface ExecResult {
  exitCode: number;
  /** The signal that ended the command, inferred as shells do from exit codes 128+N; else null. */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when output was longer than `maxOutputBytes` and only its end was kept. */
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
}

/**
 * Why an exec produced no exit code:
 * - `unavailable`: the container does not accept execs (yet): Pod unscheduled, container creating
 *   or not running. Retry later.
 * - `refused`: the API server refused for good (NotFound, Forbidden, unknown container, completed Pod).
 * - `start_failed`: the upgrade worked but the command could not start (e.g. not in $PATH).
 * - `stream`: the connection broke before the exit status arrived (the command may have run).
 * - `aborted`: the caller's signal fired.
 */
type ExecFailureKind = 'unavailable' | 'refused' | 'start_failed' | 'stream' | 'aborted';

/** Thrown by `execInContainer` when the command did not report an exit code. */
export class KubeExecError extends Error {
  override readonly name = 'KubeExecError';
  readonly kind: ExecFailureKind;
  /** HTTP status of a refused upgrade. */
  readonly status: number | undefined;
  /** Status reason from the API server or the exec status. */
  readonly reason: string | undefined;
  /** What the command had printed (tails) when an abort or a broken stream ended the exec; for diagnostics. */
  readonly partial: { stdout: string; stderr: string } | undefined;
  constructor(message: string, fields: { kind: ExecFailureKind; status?: number; reason?: string; cause?: unknown; partial?: { stdout: string; stderr: string } }) {
    super(`kubernetes exec failed: ${sanitize(message)}`, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.kind = fields.kind;
    this.status = fields.status;
    this.reason = fields.reason;
    this.partial = fields.partial;
  }
}

/** True when the container does not accept execs yet (poll again). */
export function isExecUnavailable(err: unknown): boolean {
  return err instanceof KubeExecError && err.kind === 'unavailable';
}

// Phrases of the API server / kubelet / runtime for a container that cannot take an exec *yet*.
const NOT_YET = [/does not have a host assigned/i, /container not found/i, /is not running/i, /container not running/i, /is waiting to start/i, /ContainerCreating/i, /not (yet )?(started|created)/i];

/**
 * Runs `command` and resolves with its exit code and output tails, whatever the exit code.
 * @throws KubeExecError when no exit code was obtained (see ExecFailureKind).
 */
export async function execInContainer(client: KubeClient, opts: ExecOptions): Promise<ExecResult> {
  const where = `${opts.namespace}/${opts.pod}/${opts.container}`;
  const connector = streamConnector(client, where, opts.pingIntervalMs !== undefined ? { pingIntervalMs: opts.pingIntervalMs } : {});
  const max = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const stdout = new TailBuffer(max, opts.onFirstStdout, opts.onStdout);
  const stderr = new TailBuffer(max);
  const stdin = opts.stdin === undefined ? null : new PassThrough();
  let status: V1Status | undefined;

  const abortAll = (): void => {
    for (const ws of connector.sockets) ws.terminate();
  };
  if (opts.signal?.aborted) throw new KubeExecError(`${where}: aborted`, { kind: 'aborted' });
  opts.signal?.addEventListener('abort', abortAll, { once: true });
  try {
    let ws: WebSocket;
    try {
      ws = (await new Exec(client.kubeConfig, connector.handler).exec(
        opts.namespace,
        opts.pod,
        opts.container,
        [...opts.command],
        stdout,
        stderr,
        stdin,
        false,
        (s: V1Status) => {
          status = s;
        },
      )) as unknown as WebSocket;
    } catch (err) {
      if (opts.signal?.aborted) throw new KubeExecError(`${where}: aborted`, { kind: 'aborted', cause: err });
      throw upgradeFailure(where, connector.upgradeError(), unwrapSocketError(err));
    }
    const closed = new Promise<void>((resolve) => {
      if (ws.readyState === ws.CLOSED) resolve();
      else ws.once('close', () => resolve());
    });
    if (stdin && opts.stdin !== undefined) {
      if (ws.protocol !== STDIN_CLOSE_PROTOCOL) {
        ws.terminate();
        throw new KubeExecError(
          `${where}: the API server negotiated ${ws.protocol || 'no subprotocol'}, which cannot close stdin without ending the exec (${STDIN_CLOSE_PROTOCOL} needs Kubernetes >= 1.30)`,
          { kind: 'refused', reason: SUBPROTOCOL_UNSUPPORTED },
        );
      }
      try {
        await pumpStdin(opts.stdin, stdin, ws);
      } catch (err) {
        ws.terminate();
        throw new KubeExecError(`${where}: reading stdin failed: ${err instanceof Error ? err.message : String(err)}`, { kind: 'stream', cause: err });
      }
    }
    await closed;
    const partial = { stdout: stdout.text(), stderr: stderr.text() };
    if (opts.signal?.aborted) throw new KubeExecError(`${where}: aborted`, { kind: 'aborted', partial });
    if (!status) {
      const lost = connector.upgradeError(); // a keep-alive that got no pong says so here
      const why = lost?.reason === 'ClientTimeout' ? ` (${lost.message})` : '';
      throw new KubeExecError(`${where}: the connection closed before the exit status arrived (the command may have run)${why}`, { kind: 'stream', partial, ...(lost ? { cause: lost } : {}) });
    }
    const exitCode = exitCodeOf(status, where);
    return {
      exitCode,
      signal: signalOf(exitCode),
      stdout: stdout.text(),
      stderr: stderr.text(),
      stdoutTruncated: stdout.truncated,
      stderrTruncated: stderr.truncated,
    };
  } finally {
    opts.signal?.removeEventListener('abort', abortAll);
  }
}

/** Feeds `source` into client-node's stdin stream (which sends each chunk at once), then ends it. */
async function pumpStdin(source: ExecStdin, sink: PassThrough, ws: WebSocket): Promise<void> {
  const chunks: Iterable<Buffer> | AsyncIterable<Buffer> = Buffer.isBuffer(source) ? [source] : (source as Iterable<Buffer> | AsyncIterable<Buffer>);
  for await (const chunk of chunks) {
    if (ws.readyState !== ws.OPEN) return; // the command ended without reading everything
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    // One WebSocket message per slice: a single huge message (tens of MiB, e.g. the SEA binary)
    // is dropped by the API server's stream proxy, closing the exec before its status.
    for (let at = 0; at < buf.length; at += STDIN_SLICE) {
      if (ws.readyState !== ws.OPEN) return;
      sink.write(buf.subarray(at, Math.min(at + STDIN_SLICE, buf.length)));
      // client-node sends without waiting; wait here for the socket to drain instead.
      while (ws.readyState === ws.OPEN && ws.bufferedAmount > STDIN_HIGH_WATER) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  }
  // 'end' makes client-node send the v5 CLOSE frame for stdin: the command sees EOF while its
  // output still flows back.
  sink.end();
}

function upgradeFailure(where: string, refused: KubeApiError | undefined, cause: unknown): KubeExecError {
  if (refused?.status !== undefined) {
    const text = refused.message;
    const code = refused.status;
    // 400 covers both "not scheduled yet" and "no such container"/"completed pod": read the text.
    const notYet = NOT_YET.some((re) => re.test(text)) || code >= 500;
    const permanent = /is not valid for pod|completed pod|not found$/i.test(text) && !/container not found/i.test(text);
    return new KubeExecError(text, {
      kind: notYet && !permanent ? 'unavailable' : 'refused',
      status: code,
      reason: refused.reason,
      cause: refused,
    });
  }
  const message = refused?.message ?? (cause instanceof Error ? cause.message : String(cause));
  return new KubeExecError(`${where}: ${message}`, { kind: 'stream', reason: refused?.reason, cause: refused ?? cause });
}

/** Exit code from the status of channel 3: Success → 0, NonZeroExitCode → its ExitCode cause. */
function exitCodeOf(status: V1Status, where: string): number {
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  if (status.reason === 'NonZeroExitCode' && cause?.message !== undefined && /^\d+$/.test(cause.message)) return Number(cause.message);
  const message = status.message ?? status.reason ?? JSON.stringify(status);
  const kind: ExecFailureKind = NOT_YET.some((re) => re.test(message)) ? 'unavailable' : 'start_failed';
  throw new KubeExecError(`${where}: ${message}`, { kind, reason: status.reason });
}

function signalOf(exitCode: number): NodeJS.Signals | null {
  if (exitCode <= 128 || exitCode > 128 + 64) return null;
  const n = exitCode - 128;
  const entry = Object.entries(osConstants.signals).find(([, num]) => num === n);
  return entry ? (entry[0] as NodeJS.Signals) : null;
}

/** A Writable keeping only the last `max` bytes written to it. */
class TailBuffer extends Writable {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(
    private readonly max: number,
    private onFirst?: () => void,
    private readonly onChunk?: (chunk: Buffer) => void,
  ) {
    super();
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.onFirst !== undefined && chunk.length > 0) {
      const first = this.onFirst;
      this.onFirst = undefined;
      first();
    }
    try {
      this.onChunk?.(chunk);
    } catch {
      // a listener's bug must not break the exec's output
    }
    this.chunks.push(Buffer.from(chunk));
    this.size += chunk.length;
    while (this.size > this.max && this.chunks.length > 0) {
      const first = this.chunks[0] as Buffer;
      const excess = this.size - this.max;
      this.truncated = true;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
      }
    }
    callback();
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
