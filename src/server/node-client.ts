/**
 * Node glue for the typed client: finds the running `berth serve` of a data dir and builds a
 * BerthClient with a `ws`-based WebSocket factory (which can send the Authorization header) and
 * a fetch on node:http (a CLI command then never loads undici: ~100–200 ms of a fresh process).
 * @module
 */
import { createRequire } from 'node:module';
import type WebSocket from 'ws';
import { httpFetch } from '../shared/http-fetch.js';
import { BerthClient, type WebSocketLike } from '../api/index.js';
import { discoverServer } from './data-dir.js';

/** `ws`, loaded on the first WebSocket only: `ls`, `status` … never open one (a faster start). */
let wsModule: typeof WebSocket | undefined;
const loadWs = (): typeof WebSocket => (wsModule ??= createRequire(import.meta.url)('ws') as typeof WebSocket);

/** A client for the server of `dataDir`, or null when none is running. */
export function clientForDataDir(dataDir: string): BerthClient | null {
  const found = discoverServer(dataDir);
  if (!found) return null;
  return new BerthClient({
    baseUrl: found.baseUrl,
    token: found.token,
    fetch: httpFetch,
    webSocket: (url, headers) => new (loadWs())(url, { headers }) as unknown as WebSocketLike,
  });
}
