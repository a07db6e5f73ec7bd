/**
 * The WebSocket side of exec and port-forward: our own implementation of client-node's
 * `WebSocketInterface` (what `Exec` and `PortForward` accept) that adds Berth's user agent and a
 * handshake timeout, keeps every socket it opens (so a caller can terminate them), reads the API
 * server's refusal of an upgrade (a v1 Status with the real reason, which client-node would reduce
 * to "Unexpected server response: 500"), and never touches process.stdin/stdout (client-node's
 * default handler ends them when a channel CLOSE frame arrives).
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { Exec } from '@kubernetes/client-node';
import WebSocket from 'ws';
import { pingUntilGone } from '../../../shared/ws-ping.js';
import { USER_AGENT } from '../constants.js';
import type { KubeClient } from './client.js';
import { KubeApiError, statusFromBody } from './errors.js';

/** The longest refusal body kept (a Status is a few hundred bytes). */
const MAX_REFUSAL_BYTES = 16 * 1024;
/** Offered in client-node's order; v5 adds the CLOSE frame that ends stdin alone. */
const CHANNEL_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];
const CLOSE_CHANNEL = 255;

/** client-node's (unexported) `WebSocketInterface`, as `Exec` and `PortForward` take it. */
type WebSocketInterface = NonNullable<ConstructorParameters<typeof Exec>[1]>;

interface StreamConnector {
  /** Give to client-node's `Exec` / `PortForward`. */
  readonly handler: WebSocketInterface;
  /** Every socket opened through `handler`, until it closes. */
  readonly sockets: Set<WebSocket>;
  /**
   * The reason the last connect failed, as a KubeApiError when the server answered the upgrade
   * with a non-101 response or the handshake failed on the network. Undefined when nothing failed.
   */
  upgradeError(): KubeApiError | undefined;
}

/**
 * Keep-alive of every exec and port-forward socket: a ping this often, and a socket whose pong has
 * not come back by the next ping is closed with an error. Without it a peer that vanished (a NAT or
 * load balancer dropping the connection silently) leaves an exec waiting forever.
 */
const PING_INTERVAL_MS = 20_000;

/** Handshake bound: the request timeout, at most 30 s (spec §2.5). */
function handshakeTimeoutMs(client: KubeClient): number {
  return Math.min(client.requestTimeoutMs, 30_000);
}

export function streamConnector(client: KubeClient, action: string, keep: { pingIntervalMs?: number } = {}): StreamConnector {
  const sockets = new Set<WebSocket>();
  let failure: KubeApiError | undefined;
  const timeout = handshakeTimeoutMs(client);

  const open = async (path: string, onMessage: (ws: WebSocket, data: Buffer, isBinary: boolean) => void): Promise<WebSocket> => {
    failure = undefined;
    const cluster = client.kubeConfig.getCurrentCluster();
    if (!cluster) throw new KubeApiError(`${action}: the kubeconfig has no current cluster`, { reason: 'Unknown' });
    // Concatenated, not resolved: a server URL may carry a path prefix (proxies, Rancher).
    const url = new URL(cluster.server.replace(/\/+$/, '') + path);
    url.protocol = url.protocol === 'http:' ? 'ws:' : 'wss:';
    const opts: WebSocket.ClientOptions = {};
    // TLS material, the bearer token or exec-plugin credential, proxy agent.
    await client.kubeConfig.applyToHTTPSOptions(opts);
    const headers = { ...(opts.headers ?? {}), 'User-Agent': USER_AGENT };
    const ws = new WebSocket(url, CHANNEL_PROTOCOLS, { ...opts, headers, handshakeTimeout: timeout });
    sockets.add(ws);
    // Attached before the handshake ends: frames in the same TCP read as the 101 response are
    // emitted right after 'open', before an awaiting caller could attach a listener.
    ws.on('message', (data: Buffer, isBinary: boolean) => onMessage(ws, data, isBinary));
    ws.on('close', () => sockets.delete(ws));
    ws.on('error', (err: Error) => {
      failure ??= new KubeApiError(`${action}: ${err.message}`, {
        reason: /timed out/i.test(err.message) ? 'ClientTimeout' : 'NetworkError',
        networkCode: (err as NodeJS.ErrnoException).code,
        cause: err,
      });
    });
    // With a listener here ws does not fail the handshake itself: read the Status, then abort.
    ws.on('unexpected-response', (_req, res: IncomingMessage) => {
      void readBounded(res).then((body) => {
        const status = statusFromBody(body);
        const code = res.statusCode ?? 0;
        const text = status?.message ?? (body.trim().slice(0, 300) || `HTTP ${code}`);
        failure = new KubeApiError(`${action}: ${text}`, {
          status: code,
          reason: status?.reason || (code >= 500 ? 'InternalError' : code === 403 ? 'Forbidden' : code === 404 ? 'NotFound' : 'BadRequest'),
          details: status?.details,
        });
        // Emits 'error' on the next tick (kept out of `failure` by `??=`), which rejects the connect.
        ws.terminate();
      });
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', (err: Error) => reject(failure ?? err));
    });
    pingUntilGone(ws, {
      intervalMs: keep.pingIntervalMs ?? PING_INTERVAL_MS,
      onDead: (err) => {
        failure ??= new KubeApiError(`${action}: ${err.message}`, { reason: 'ClientTimeout', cause: err });
      },
    });
    return ws;
  };

  const handler: WebSocketInterface = {
    async connect(path, _textHandler, binaryHandler) {
      const ws = await open(path, (socket, data, isBinary) => {
        // Text frames belong to the base64 protocols, which are not offered.
        if (!isBinary || data.length < 1 || !binaryHandler) return;
        const channel = data[0] as number;
        // A CLOSE frame for one channel: nothing to do on our side, the status or socket close follows.
        if (channel === CLOSE_CHANNEL) return;
        if (!binaryHandler(channel, data.subarray(1))) socket.close();
      });
      return ws as never;
    },
  };
  return { handler, sockets, upgradeError: () => failure };
}

/** The Error inside whatever client-node rejects with (ws rejects with an ErrorEvent). */
export function unwrapSocketError(err: unknown): unknown {
  if (err !== null && typeof err === 'object' && 'error' in err && (err as { error: unknown }).error instanceof Error) {
    return (err as { error: Error }).error;
  }
  return err;
}

function readBounded(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => resolve(Buffer.concat(chunks).toString('utf8'));
    res.on('data', (chunk: Buffer) => {
      if (size < MAX_REFUSAL_BYTES) chunks.push(chunk.subarray(0, MAX_REFUSAL_BYTES - size));
      size += chunk.length;
    });
    res.on('end', done);
    res.on('error', done);
    res.on('close', done);
  });
}
