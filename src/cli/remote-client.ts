/**
 * The API client for a remote controller: HTTPS verified against Node's CA store plus the context's
 * CA bundle when it has one (there is no switch to turn verification off), the bearer token on
 * every request and on the shell's WebSocket (`ws`, with the same CA). Plain http only on loopback
 * (a port-forward; see normalizeServerUrl).
 * @module
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { createRequire } from 'node:module';
import { rootCertificates } from 'node:tls';
import type WebSocket from 'ws';
import { BerthClient, type WebSocketLike } from '../api/index.js';
import { httpFetch, IDLE_SOCKET_MS } from '../shared/http-fetch.js';
import { UsageError } from './exit-codes.js';

/** The CA certificates to trust: Node's store plus the PEM bundle `caFile` (read and checked here). */
function trustedCas(caFile: string | undefined): string[] | undefined {
  if (caFile === undefined) return undefined;
  let pem: string;
  try {
    pem = readFileSync(caFile, 'utf8');
  } catch (err) {
    throw new UsageError(`CA bundle ${caFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (give a readable PEM file with --ca, or berth login again)`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`CA bundle ${caFile}: no PEM certificate in it (expected -----BEGIN CERTIFICATE-----)`);
  return [...rootCertificates, pem];
}

let wsModule: typeof WebSocket | undefined;
const loadWs = (): typeof WebSocket => (wsModule ??= createRequire(import.meta.url)('ws') as typeof WebSocket);

/** A client for `server` with `token` (null: requests go without one and get 401), trusting `caFile` besides Node's CAs. */
export function remoteClient(server: string, token: string | null, caFile: string | undefined): BerthClient {
  const ca = trustedCas(caFile);
  const tls = server.startsWith('https:');
  const agent = new Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS, ...(ca ? { ca } : {}) });
  return new BerthClient({
    baseUrl: server,
    token,
    fetch: tls ? (url, init) => httpFetch(url, { ...init, httpsAgent: agent }) : httpFetch,
    webSocket: (url, headers) => new (loadWs())(url, { headers, ...(tls && ca ? { ca } : {}) }) as unknown as WebSocketLike,
  });
}
