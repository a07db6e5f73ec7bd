/**
 * How long Berth's HTTP servers (agentctl's control and instance servers, `berth serve`'s API) keep
 * an idle kept-alive connection: longer than any Berth client keeps one (IDLE_SOCKET_MS in
 * http-fetch.ts). Node's default for both sides is 5 s, and then a request sent on a reused socket
 * can meet the server closing it at the same instant ("socket hang up" / ECONNRESET; a POST is not
 * retried). With the server outlasting the client, the client always closes first.
 * @module
 */
import type { Server } from 'node:http';

export const SERVER_IDLE_MS = 65_000;

/** Sets `server`'s keep-alive timeout past every Berth client's (keep-alive.test.ts holds the two apart); returns it. */
export function outlastClients<T extends Server>(server: T): T {
  server.keepAliveTimeout = SERVER_IDLE_MS;
  return server;
}
