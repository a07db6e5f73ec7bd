/**
 * Joining two sockets into one byte stream: each direction piped with backpressure (so at most a
 * stream's high-water mark is buffered per direction), an end passed on as an end (create both
 * sockets with `allowHalfOpen: true`, or a socket that reads an end closes its own side before the
 * other direction is through), and both destroyed once both directions ended or either failed.
 * Used by the relays between a TCP port and a Unix socket (agentctl's egress relay inside a sandbox
 * without a network, the local executor's relay to agentctl's control socket).
 * @module
 */
import type { Socket } from 'node:net';
import { pipeline } from 'node:stream';

/** Pipes `a` and `b` into each other; `onClose` runs once when both are destroyed. */
export function splice(a: Socket, b: Socket, onClose?: () => void): void {
  let ended = 0;
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    a.destroy();
    b.destroy();
    onClose?.();
  };
  const directionEnded = (err: Error | null | undefined): void => {
    if (err) return close();
    ended += 1;
    if (ended === 2) close();
  };
  pipeline(a, b, directionEnded);
  pipeline(b, a, directionEnded);
}
