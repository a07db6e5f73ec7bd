/**
 * A supervised port-forward: one local listener on 127.0.0.1 (ephemeral port) per target, and one
 * port-forward WebSocket (client-node `PortForward`) per accepted TCP connection. A failure ends
 * only its own connection; it is counted and reported through `onConnectionError`, so the executor
 * can keep polling agentctl's health through the same listener while the Pod starts.
 * @module
 */
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import { PortForward } from '@kubernetes/client-node';
import type WebSocket from 'ws';
import { sanitize } from '../../../shared/sanitize.js';
import type { KubeClient } from './client.js';
import { streamConnector, unwrapSocketError } from './websocket.js';

/** The only local address a forward listens on (spec §6.1). */
export const FORWARD_LOCAL_ADDRESS = '127.0.0.1';

export interface ForwardTarget {
  namespace: string;
  pod: string;
  /** Port inside the Pod (1–65535). */
  port: number;
}

export interface OpenForwardOptions {
  /** Called once per connection that failed (upgrade refused, error channel, socket error). */
  onConnectionError?: (err: KubeForwardError) => void;
  /** Keep-alive ping interval of each connection's WebSocket. @default PING_INTERVAL_MS (20 s) */
  pingIntervalMs?: number;
}

interface ForwardStats {
  /** TCP connections accepted so far. */
  accepted: number;
  /** Connections open now. */
  active: number;
  /** Connections that ended with an error. */
  failures: number;
}

export interface PortForwardSession {
  readonly localAddress: typeof FORWARD_LOCAL_ADDRESS;
  readonly localPort: number;
  readonly target: Readonly<ForwardTarget>;
  stats(): ForwardStats;
  /** Stops listening and ends every live connection and WebSocket. Idempotent. */
  close(): Promise<void>;
}

/** A failure of one forwarded connection (the listener keeps running). */
export class KubeForwardError extends Error {
  override readonly name = 'KubeForwardError';
  /** HTTP status when the API server refused the upgrade. */
  readonly status: number | undefined;
  constructor(message: string, fields: { status?: number; cause?: unknown } = {}) {
    super(`kubernetes port forward failed: ${sanitize(message)}`, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.status = fields.status;
  }
}

/** What the listener and its connections share. */
interface ForwardState {
  readonly client: KubeClient;
  readonly target: ForwardTarget;
  readonly where: string;
  readonly opts: OpenForwardOptions;
  readonly stats: ForwardStats;
  readonly sockets: Set<Socket>;
  readonly streams: Set<WebSocket>;
  closing: Promise<void> | undefined;
}

/**
 * Listens on 127.0.0.1:0 and forwards each accepted connection to `target`.
 * Resolves once listening; nothing contacts the API server until a connection arrives.
 */
export async function openForward(client: KubeClient, target: ForwardTarget, opts: OpenForwardOptions = {}): Promise<PortForwardSession> {
  if (!Number.isInteger(target.port) || target.port < 1 || target.port > 65535) {
    throw new KubeForwardError(`port_forward.remote_port: must be 1-65535, got ${target.port}`);
  }
  const state: ForwardState = {
    client,
    target,
    where: `${target.namespace}/${target.pod}:${target.port}`,
    opts,
    stats: { accepted: 0, active: 0, failures: 0 },
    sockets: new Set(),
    streams: new Set(),
    closing: undefined,
  };
  const server: Server = createServer((socket) => {
    state.stats.accepted++;
    state.stats.active++;
    state.sockets.add(socket);
    socket.on('error', () => socket.destroy()); // a reset by the local client ends only this connection
    socket.on('close', () => {
      state.stats.active--;
      state.sockets.delete(socket);
    });
    void forwardConnection(state, socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, FORWARD_LOCAL_ADDRESS, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: localPort } = server.address() as AddressInfo;
  return {
    localAddress: FORWARD_LOCAL_ADDRESS,
    localPort,
    target: { ...target },
    stats: () => ({ ...state.stats }),
    close(): Promise<void> {
      state.closing ??= closeForward(server, state);
      return state.closing;
    },
  };
}

/** Stops listening and ends every live connection and WebSocket. */
async function closeForward(server: Server, state: ForwardState): Promise<void> {
  const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
  const socketsClosed = [...state.sockets].map((socket) => new Promise<void>((resolve) => socket.once('close', () => resolve())));
  for (const ws of state.streams) ws.terminate();
  for (const socket of state.sockets) socket.destroy();
  await Promise.all([serverClosed, ...socketsClosed]);
}

/** Counts and reports a connection's first failure (none while closing) and ends the connection. */
function fail(state: ForwardState, socket: Socket, err: KubeForwardError, reported: { done: boolean }): void {
  if (!reported.done && !state.closing) {
    reported.done = true;
    state.stats.failures++;
    state.opts.onConnectionError?.(err);
  }
  socket.destroy();
}

/** One accepted connection: its own port-forward WebSocket to the target, piped both ways. */
async function forwardConnection(state: ForwardState, socket: Socket): Promise<void> {
  const { where, opts } = state;
  const reported = { done: false };
  const connector = streamConnector(state.client, where, opts.pingIntervalMs !== undefined ? { pingIntervalMs: opts.pingIntervalMs } : {});
  // Buffer what the client sends before the WebSocket is open. The TCP half-close is not
  // propagated: without v5 client-node would close the whole WebSocket and lose the reply.
  const input = new PassThrough();
  socket.pipe(input, { end: false });
  const output = new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (socket.writable) socket.write(chunk, () => cb());
      else cb();
    },
  });
  const errorChannel = new Writable({
    write(chunk: Buffer, _enc, cb) {
      // The first frame of each channel is only the port number (stripped by client-node).
      const text = chunk.toString('utf8').trim();
      if (text) fail(state, socket, new KubeForwardError(`${where}: ${text}`), reported);
      cb();
    },
  });
  let ws: WebSocket;
  try {
    const { namespace, pod, port } = state.target;
    const result = await new PortForward(state.client.kubeConfig, true, connector.handler).portForward(namespace, pod, [port], output, errorChannel, input);
    if (typeof result === 'function') throw new Error('client-node returned a restartable handle');
    ws = result as unknown as WebSocket;
  } catch (err) {
    const refused = connector.upgradeError();
    const cause = unwrapSocketError(err);
    const message = refused?.message ?? (cause instanceof Error ? cause.message : String(cause));
    fail(state, socket, new KubeForwardError(message, { status: refused?.status, cause: refused ?? cause }), reported);
    return;
  }
  if (socket.destroyed || state.closing) {
    ws.terminate();
    return;
  }
  state.streams.add(ws);
  ws.on('close', () => {
    state.streams.delete(ws);
    socket.end();
  });
  ws.on('error', (err: Error) => fail(state, socket, new KubeForwardError(`${where}: ${err.message}`, { cause: err }), reported));
  socket.on('close', () => ws.close());
}
