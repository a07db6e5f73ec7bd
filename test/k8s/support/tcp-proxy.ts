/**
 * A TCP proxy on 127.0.0.1 in front of the API server, so a test can cut live connections (a
 * watch, an exec) the way a network failure would. TLS passes through untouched: the API
 * server's certificate has 127.0.0.1 among its names.
 * @module
 */
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

export interface TcpProxy {
  /** `https://127.0.0.1:<port>` */
  server: string;
  /** Connections open now. */
  open(): number;
  /** Destroys every open connection (both sides); new connections are still accepted. */
  cutAll(): void;
  close(): Promise<void>;
}

/** Proxies to the host and port of `target` (an https URL). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const url = new URL(target);
  const port = Number(url.port || 443);
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((client) => {
    const upstream = connect({ host: url.hostname, port });
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: local } = server.address() as AddressInfo;
  const proxy: TcpProxy = {
    server: `https://127.0.0.1:${local}`,
    open: () => pairs.size,
    cutAll() {
      for (const [a, b] of [...pairs]) {
        a.destroy();
        b.destroy();
      }
    },
    close() {
      proxy.cutAll();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
