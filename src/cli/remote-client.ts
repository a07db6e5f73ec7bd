/**
 * The API client for a remote controller: HTTPS verified against Node's CA store plus the context's
 * CA bundle when it has one (there is no switch to turn verification off), the bearer token on
 * every request and on the shell's WebSocket (`ws`, with the same CA). Plain http only on loopback
 * (a port-forward; see normalizeServerUrl).
 * @module
 */
import { readFileSync } from 'node:fs';
import { Agent, request, type RequestOptions } from 'node:https';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';
import type WebSocket from 'ws';
import { BerthClient, type WebSocketLike } from '../api/index.js';
import { httpFetch } from '../shared/http-fetch.js';
import { UsageError } from './exit-codes.js';

/** An idle kept-alive socket is closed after this long (as http-fetch.ts). */
const IDLE_SOCKET_MS = 5_000;

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

interface FetchInit {
  method?: string | undefined;
  headers?: RequestInit['headers'];
  body?: RequestInit['body'];
  signal?: AbortSignal | null | undefined;
}

/** A fetch on node:https with `agent` (the CA): the part of a Response the typed client reads. */
function httpsFetch(agent: Agent): (url: string, init?: FetchInit) => Promise<{ ok: boolean; status: number; body: ReadableStream<Uint8Array>; text(): Promise<string>; json(): Promise<unknown> }> {
  return (url, init = {}) =>
    new Promise((resolve, reject) => {
      const signal = init.signal ?? undefined;
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const body = typeof init.body === 'string' ? init.body : undefined;
      const headers = { ...((init.headers ?? {}) as Record<string, string>) };
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      const opts: RequestOptions = { method: init.method ?? 'GET', headers, agent };
      const req = request(new URL(url), opts);
      let settled = false;
      const onAbort = (): void => {
        req.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
        if (!settled) {
          settled = true;
          reject(signal?.reason);
        }
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        reject(new TypeError('fetch failed', { cause: err }));
      });
      req.on('response', (res) => {
        settled = true;
        res.once('close', () => signal?.removeEventListener('abort', onAbort));
        const status = res.statusCode ?? 0;
        const text = async (): Promise<string> => {
          const chunks: Buffer[] = [];
          for await (const chunk of res) chunks.push(chunk as Buffer);
          return Buffer.concat(chunks).toString('utf8');
        };
        resolve({
          ok: status >= 200 && status < 300,
          status,
          get body() {
            return Readable.toWeb(res) as ReadableStream<Uint8Array>;
          },
          text,
          json: async () => JSON.parse(await text()) as unknown,
        });
      });
      req.end(body);
    });
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
    fetch: tls ? httpsFetch(agent) : httpFetch,
    webSocket: (url, headers) => new (loadWs())(url, { headers, ...(tls && ca ? { ca } : {}) }) as unknown as WebSocketLike,
  });
}
