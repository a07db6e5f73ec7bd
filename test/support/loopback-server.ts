/**
 * Loopback HTTP servers for the client unit tests (src/agentctl-client/*.test.ts). Lives outside src/client
 * because that folder may not import node:* outside its test files.
 *
 * Register `afterEach(closeServers)` in each test file that uses it.
 * @module
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
export type Handler = (req: Seen, res: ServerResponse) => void;

const servers: Server[] = [];

/** Closes every server started since the last call (dropping open connections). */
export async function closeServers(): Promise<void> {
  await Promise.all(
    servers.splice(0).map((s) => {
      s.closeAllConnections();
      return new Promise((r) => s.close(r));
    }),
  );
}

/** Starts `server` on an ephemeral loopback port, tracked for closeServers; returns its base URL. */
export async function listenLoopback(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A loopback server answering each request with the next handler (the last one repeats). */
export async function serve(...handlers: Handler[]): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(entry);
      const handler = handlers[Math.min(seen.length - 1, handlers.length - 1)];
      handler?.(entry, res);
    });
  });
  return { url: await listenLoopback(server), seen };
}

/** A URL on which nothing listens any more (a server that was started, then closed). */
export async function closedPortUrl(): Promise<string> {
  const { url } = await serve(hang);
  const server = servers.pop();
  await new Promise((r) => server?.close(r));
  return url;
}

export const json =
  (status: number, body: unknown): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
export const hang: Handler = () => undefined;
export const reset: Handler = (_req, res) => res.socket?.destroy();
