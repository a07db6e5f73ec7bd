/**
 * Node glue for the typed client: finds the running `berth serve` of a data dir and builds a
 * BerthClient with a `ws`-based WebSocket factory (which can send the Authorization header).
 * @module
 */
import WebSocket from 'ws';
import { BerthClient, type WebSocketLike } from './client.js';
import { discoverServer } from './data-dir.js';

/** A client for the server of `dataDir`, or null when none is running. */
export function clientForDataDir(dataDir: string): BerthClient | null {
  const found = discoverServer(dataDir);
  if (!found) return null;
  return new BerthClient({
    baseUrl: found.baseUrl,
    token: found.token,
    webSocket: (url, headers) => new WebSocket(url, { headers }) as unknown as WebSocketLike,
  });
}
