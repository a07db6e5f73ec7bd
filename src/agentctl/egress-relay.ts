/**
 * The egress relay of a sandbox without a network of its own: agentctl listens on a loopback address
 * inside the sandbox (the agent's HTTPS_PROXY points there) and pipes every connection to the Unix
 * socket of Berth's egress proxy that the executor bound into the sandbox. A byte pipe only: the
 * proxy authenticates and filters. Buffering is bounded by the pipes' backpressure; a connection that
 * fails (the proxy is gone, the client resets) ends that connection alone.
 * @module
 */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { splice } from '../shared/splice.js';
import type { EgressRelay } from './config.js';

interface RunningRelay {
  /** The port it listens on (the configured one; the bound one when that was 0). */
  port: number;
  /** Stops accepting and drops every open connection. */
  close(): Promise<void>;
}

/** Listens on `relay.host:relay.port`; rejects when it cannot (the port is taken). */
export function startEgressRelay(relay: EgressRelay, log: Logger): Promise<RunningRelay> {
  const open = new Set<Socket>();
  let failures = 0;
  const server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ path: relay.socket, allowHalfOpen: true });
    open.add(client);
    open.add(upstream);
    upstream.once('error', (err: NodeJS.ErrnoException) => {
      // logged once per run of failures, not once per connection of a retrying client
      if (failures++ === 0) log.warn({ socket: relay.socket, code: err.code }, 'egress relay: cannot reach the egress proxy');
    });
    upstream.once('connect', () => (failures = 0));
    splice(client, upstream, () => {
      open.delete(client);
      open.delete(upstream);
    });
  });
  server.on('error', (err) => log.error({ err }, 'egress relay failed'));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(relay.port, relay.host, () => {
      server.off('error', reject);
      log.info({ address: `${relay.host}:${relay.port}`, socket: relay.socket }, 'egress relay listening');
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            for (const s of open) s.destroy();
          }),
      });
    });
  });
}
