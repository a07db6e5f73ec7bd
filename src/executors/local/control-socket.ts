/**
 * Reaching an agentctl whose sandbox has no network of its own (a network policy, issue 23): its
 * loopback ports are the sandbox's, out of the controller's reach. The controller binds a Unix socket
 * at `<sessionDir>/agentctl.sock` itself and hands the listening descriptor to agentctl's spawn
 * (`AGENTCTL_CONTROL_FD`), and agentctl serves its control API there — the instance APIs too, by
 * X-Instance-ID. The session dir lies in the data dir, which the sandbox hides: nothing inside can
 * see, remove or replace the socket's path, so (unlike a loopback port, see listener.ts) whatever
 * answers on it is the agentctl that was handed the descriptor, and the token may go there. The HTTP
 * and WebSocket clients keep speaking TCP: a relay on the controller's loopback pipes each of their
 * connections to the socket ({@link openEndpoint}); it is closed with the instance.
 * @module
 */
import { chmodSync, linkSync, lstatSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { splice } from '../../shared/splice.js';
import { probeControl } from './connect.js';
import { FILES } from './constants.js';

/** The descriptor number agentctl finds its control socket on (after the report pipe's). */
export const CONTROL_SOCKET_FD = 4;

const LOOPBACK = '127.0.0.1';

export function controlSocketPath(sessionDir: string): string {
  return join(sessionDir, FILES.controlSocket);
}

/** A listening control socket bound for one spawn of agentctl. */
interface BoundControlSocket {
  /** Its descriptor in this process: the spawn passes it on. */
  fd: number;
  /** Closes this process's copy (agentctl keeps its own): call once agentctl is spawned. */
  release(): Promise<void>;
}

function removeStale(path: string): void {
  try {
    lstatSync(path);
  } catch {
    return;
  }
  unlinkSync(path);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Binds a fresh control socket (0600) at the session's path, replacing whatever an earlier agentctl
 * left there. It is bound under a staging name and linked to its place: closing a Node server
 * unlinks the path it bound, and the socket must stay reachable after this process lets go of it.
 */
export async function bindControlSocket(sessionDir: string): Promise<BoundControlSocket> {
  const path = controlSocketPath(sessionDir);
  const staging = `${path}.bind`;
  removeStale(staging);
  removeStale(path);
  // not accepting for agentctl: nothing connects before the spawn reports, and this copy is closed by then
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(staging, () => {
      server.off('error', reject);
      resolve();
    });
  });
  try {
    chmodSync(staging, 0o600);
    linkSync(staging, path);
    // Node exposes a server's descriptor only on its handle
    const fd = (server as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) throw new Error('the control socket has no descriptor to pass on');
    return { fd, release: () => closeServer(server) };
  } catch (err) {
    await closeServer(server);
    throw err;
  }
}

/** Where the HTTP clients of one agentctl connect: its loopback port, or a relay to its control socket. */
export interface AgentctlEndpoint {
  /** The port on this host's loopback. */
  port: number;
  /** The instance API's base URL when it is served on the control endpoint (the socket), else null (its own port). */
  instanceBaseUrl: string | null;
  /** Closes the relay (nothing for a plain port). */
  close(): Promise<void>;
}

/**
 * A relay on 127.0.0.1 (a free port) that pipes every connection to the Unix socket at `path`. Its
 * listener does not keep the process alive; `close` drops the connections still open.
 */
async function openRelay(path: string): Promise<{ port: number; close(): Promise<void> }> {
  const open = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ path, allowHalfOpen: true });
    open.add(client);
    open.add(upstream);
    splice(client, upstream, () => {
      open.delete(client);
      open.delete(upstream);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.unref();
  const { port } = server.address() as { port: number };
  let closing: Promise<void> | null = null;
  return {
    port,
    close: () => {
      closing ??= (() => {
        const closed = closeServer(server);
        for (const s of open) s.destroy();
        return closed;
      })();
      return closing;
    },
  };
}

/**
 * The endpoint of an agentctl: for a session without a network of its own a relay to its control
 * socket (which must exist), else its recorded loopback port (the caller checks who listens there).
 */
export async function openEndpoint(target: { sessionDir: string; privateNetwork?: boolean; controlPort: number | null }): Promise<AgentctlEndpoint> {
  if (target.privateNetwork !== true) {
    if (target.controlPort === null) throw new Error('agentctl has no recorded control port');
    return { port: target.controlPort, instanceBaseUrl: null, close: () => Promise.resolve() };
  }
  const path = controlSocketPath(target.sessionDir);
  let isSocket = false;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    // absent
  }
  if (!isSocket) throw new Error(`agentctl's control socket ${path} is not there`);
  const relay = await openRelay(path);
  return { port: relay.port, instanceBaseUrl: `http://${LOOPBACK}:${relay.port}`, close: relay.close };
}

/** One health probe of an agentctl at its endpoint (`status`): false when it does not answer or the endpoint is gone. */
export async function probeEndpoint(target: Parameters<typeof openEndpoint>[0]): Promise<boolean> {
  let endpoint: AgentctlEndpoint;
  try {
    endpoint = await openEndpoint(target);
  } catch {
    return false;
  }
  try {
    return await probeControl(endpoint.port);
  } finally {
    await endpoint.close();
  }
}
