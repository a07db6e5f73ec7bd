import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import { PortForward } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';

export interface ForwardedPort {
  /** Local port on 127.0.0.1 that forwards to the pod's port. */
  port: number;
  /** Errors the API server reported on the error channel, per connection. */
  errors: string[];
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1 (an ephemeral port) and forwards every accepted TCP
 * connection to `remotePort` of the pod through the API server's port-forward
 * WebSocket. client-node carries one TCP stream per WebSocket, so each
 * connection gets its own.
 */
export async function forwardPort(kc: KubeConfig, namespace: string, pod: string, remotePort: number): Promise<ForwardedPort> {
  const errors: string[] = [];
  const sockets = new Set<Socket>();

  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    void connect(socket).catch((err: unknown) => {
      errors.push(err instanceof Error ? err.message : String(err));
      socket.destroy();
    });
  });

  async function connect(socket: Socket): Promise<void> {
    // client-node reads `input` with 'data'/'end' listeners; pipe the socket through
    // a PassThrough so nothing is lost before the WebSocket is open.
    const input = new PassThrough();
    socket.pipe(input);
    const output = new Writable({
      write(chunk: Buffer, _enc, cb) {
        if (socket.writable) socket.write(chunk, () => cb());
        else cb();
      },
    });
    const errorChannel = new Writable({
      write(chunk: Buffer, _enc, cb) {
        // The first frame of each channel is only the port number (stripped by
        // client-node), so an empty chunk is not an error.
        const text = chunk.toString('utf8').trim();
        if (text) {
          errors.push(text);
          socket.destroy();
        }
        cb();
      },
    });
    const result = await new PortForward(kc).portForward(namespace, pod, [remotePort], output, errorChannel, input);
    if (typeof result === 'function') throw new Error('unexpected restartable port-forward handle');
    const ws = result;
    ws.on('close', () => socket.end());
    ws.on('error', (err: Error) => {
      errors.push(err.message);
      socket.destroy();
    });
    socket.on('close', () => ws.close());
    socket.on('error', () => ws.close());
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    errors,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
