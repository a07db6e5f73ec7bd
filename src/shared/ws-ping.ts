/**
 * Keep-alive of a WebSocket, either end: a ping every `intervalMs`, and a socket whose pong has not
 * come back by the next ping is terminated. Used on the Kubernetes exec and port-forward sockets (a
 * peer that vanished silently, behind a NAT or load balancer, would leave an exec waiting forever)
 * and on `berth serve`'s shell sockets (the pings are traffic on an idle shell, so a proxy's read
 * timeout does not cut it, and a client that vanished ends its shell).
 * @module
 */
import type WebSocket from 'ws';

interface PingOptions {
  intervalMs: number;
  /** Called once, just before the socket is terminated for want of a pong. */
  onDead?: (err: Error) => void;
}

export function pingUntilGone(ws: WebSocket, opts: PingOptions): void {
  let answered = true;
  ws.on('pong', () => {
    answered = true;
  });
  const timer = setInterval(() => {
    if (ws.readyState !== ws.OPEN) return;
    if (!answered) {
      clearInterval(timer);
      opts.onDead?.(new Error(`no answer to a keep-alive ping within ${Math.round(opts.intervalMs / 1000)} s: the connection is gone`));
      ws.terminate(); // 'close' follows
      return;
    }
    answered = false;
    ws.ping();
  }, opts.intervalMs);
  timer.unref();
  ws.once('close', () => clearInterval(timer));
}
