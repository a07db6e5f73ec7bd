/**
 * A `fetch` on node:http, with one shared keep-alive agent, for Berth's own HTTP clients in Node:
 * the controller's agentctl clients and the CLI's API client.
 *
 * - Node's global fetch (undici) keeps a connection pool per origin for the life of the process.
 *   Every agentctl has its own origin (a local port, or a port-forward's random local port), so a
 *   long-running `berth serve` grew by a pool per session it ever talked to (measured: ~0.1 MiB of
 *   heap per launch/rm cycle). node:http's agent drops an origin once its last socket closes, and
 *   idle sockets close after {@link IDLE_SOCKET_MS}; connections are still reused between calls
 *   (through a port-forward each new connection is a new WebSocket to the API server).
 * - Loading undici (the first `fetch`, or even `new Response`) costs a fresh process ~100–200 ms:
 *   more than the rest of a `berth ls`. The response here is a small object with what the clients
 *   read — `ok`, `status`, `headers.get`, `text()`, `json()` and `body` as a web stream (opened only
 *   when read, for event and log streams).
 * @module
 */
import { Agent, request, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { Readable } from 'node:stream';

/** An idle kept-alive socket is closed after this long. */
export const IDLE_SOCKET_MS = 5_000;

const agent = new Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS });

/** The request fields the clients send. */
interface HttpFetchInit {
  method?: string | undefined;
  headers?: RequestInit['headers'];
  body?: RequestInit['body'];
  signal?: AbortSignal | null | undefined;
  /** For `https:` URLs (required there): the agent that holds the trusted CAs and the kept-alive sockets. */
  httpsAgent?: HttpsAgent | undefined;
}

/** A response of {@link httpFetch}: the part of fetch's Response that Berth's clients read. */
class HttpFetchResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: { get(name: string): string | null };
  #res: IncomingMessage;
  #used = false;

  constructor(res: IncomingMessage) {
    this.#res = res;
    this.status = res.statusCode ?? 0;
    this.statusText = res.statusMessage ?? '';
    const raw = res.headers;
    this.headers = {
      get: (name) => {
        const v = raw[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
      },
    };
  }

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  /** The body as a web stream (read once, like fetch's). */
  get body(): ReadableStream<Uint8Array> {
    this.#claim();
    return Readable.toWeb(this.#res) as ReadableStream<Uint8Array>;
  }

  async text(): Promise<string> {
    this.#claim();
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of this.#res) chunks.push(chunk as Buffer);
    } catch (err) {
      throw new TypeError('fetch failed: the response body was cut', { cause: err });
    }
    // a connection that ends before the announced length is a cut, not a shorter body
    if (!this.#res.complete) throw new TypeError('fetch failed: the response body was cut', { cause: { code: 'ECONNRESET' } });
    return Buffer.concat(chunks).toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  #claim(): void {
    if (this.#used) throw new TypeError('the response body was already read');
    this.#used = true;
  }
}

function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  if (headers === undefined) return {};
  if (Array.isArray(headers)) return Object.fromEntries(headers);
  const h = headers as Headers;
  // a Headers object, told by shape (naming the global Headers would load undici)
  if (typeof h.forEach === 'function' && typeof h.get === 'function') {
    const out: Record<string, string> = {};
    h.forEach((v, k) => (out[k] = v));
    return out;
  }
  return { ...(headers as Record<string, string>) };
}

/**
 * Sends one request over node:http (agentctl, forwards and a local `berth serve` listen on plain
 * HTTP), or node:https with `init.httpsAgent` (a remote controller), and resolves with the response head; rejects as fetch does — the caller's signal's
 * reason on abort, a TypeError whose `cause` carries the socket error's `code` otherwise.
 */
export function httpFetch(url: string, init: HttpFetchInit = {}): Promise<HttpFetchResponse> {
  return new Promise<HttpFetchResponse>((resolve, reject) => {
    const target = new URL(url);
    const tls = target.protocol === 'https:' && init.httpsAgent !== undefined;
    if (target.protocol !== 'http:' && !tls) {
      reject(new TypeError(`httpFetch supports only http: URLs (https: with an httpsAgent), not ${target.protocol}`));
      return;
    }
    const signal = init.signal ?? undefined;
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') {
      reject(new TypeError('httpFetch sends only string bodies'));
      return;
    }
    const body = init.body ?? undefined;
    const headers = headerRecord(init.headers);
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const method = init.method ?? 'GET';
    const req = tls ? httpsRequest(target, { method, headers, agent: init.httpsAgent }) : request(target, { method, headers, agent });
    let settled = false;
    const onAbort = (): void => {
      // also cuts a body being read: its reader sees the error
      req.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      if (!settled) {
        settled = true;
        reject(signal?.reason);
      }
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const release = (): void => signal?.removeEventListener('abort', onAbort);
    req.on('error', (err) => {
      release();
      if (settled) return;
      settled = true;
      reject(new TypeError('fetch failed', { cause: err }));
    });
    req.on('response', (res: IncomingMessage) => {
      res.once('close', release);
      settled = true;
      resolve(new HttpFetchResponse(res));
    });
    req.end(body);
  });
}

/** Origins the agent holds a socket for (in use or idle); for tests of the no-growth promise. */
export function heldOrigins(): string[] {
  return [...new Set([...Object.keys(agent.sockets), ...Object.keys(agent.freeSockets)])];
}
