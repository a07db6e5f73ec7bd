/**
 * A fake model API over HTTPS for the credential broker's tests: `POST /v1/messages` (Anthropic
 * shape, `x-api-key`) and `POST /v1/chat/completions` (OpenAI shape, `Authorization: Bearer`), each
 * as JSON or, with `"stream": true`, as server-sent events carrying the usage the real APIs report
 * (`FAKE_USAGE`). A wrong or missing key gets 401 in the API's error shape. It records every request
 * with the credentials it carried, so a test can assert that the real key arrived and the agent's
 * token did not. Request bodies are read as they come (counted, parsed only up to 1 MiB) and bodies
 * over 1 MiB slowly (a pause every 256 KiB), so a proxy in between must hold back the sender.
 *
 * In a test: `const api = await startFakeModelApi({ key, cert, keyPem })`. As a process (e.g. on the
 * test cluster's network):
 *   FAKE_MODEL_API_KEY=… FAKE_MODEL_API_CERT=cert.pem FAKE_MODEL_API_KEY_PEM=key.pem [PORT=8443] [HOST=0.0.0.0] \
 *     node scripts/run-ts.mjs test/support/fake-model-api.ts
 * prints `fake-model-api listening on https://HOST:PORT` and serves until SIGTERM.
 * @module
 */
import { timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

/** The usage every reply reports. */
export const FAKE_USAGE = {
  anthropic: { input_tokens: 11, output_tokens: 7 },
  openai: { prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 },
} as const;

export interface FakeModelApiOptions {
  /** The one API key accepted. */
  readonly key: string;
  /** The server's certificate and private key (PEM). */
  readonly cert: string;
  readonly keyPem: string;
  /** @default 0 (any free port) */
  readonly port?: number;
  /** @default '127.0.0.1' */
  readonly host?: string;
}

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  /** The `x-api-key` and `Authorization` values as received (null when absent). */
  readonly apiKey: string | null;
  readonly authorization: string | null;
  /** The body's size, and the body parsed as JSON when it was at most 1 MiB and JSON. */
  bytes: number;
  body: unknown;
}

export interface FakeModelApi {
  readonly port: number;
  /** `https://host:port` */
  readonly url: string;
  /** Every request, in order of arrival (added when its headers arrive; `bytes`/`body` once read). */
  readonly requests: ReceivedRequest[];
  /**
   * Holds the next streamed reply after its first text event until the returned function is called
   * (a test sees the first event arrive while the rest is not yet sent).
   */
  holdNextStream(): () => void;
  close(): Promise<void>;
}

const MiB = 1024 * 1024;

export async function startFakeModelApi(options: FakeModelApiOptions): Promise<FakeModelApi> {
  const requests: ReceivedRequest[] = [];
  let hold: Promise<void> | null = null;
  const server = createServer({ cert: options.cert, key: options.keyPem }, (req, res) => {
    answer(req, res).catch(() => res.destroy());
  });

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const header = (name: string): string | null => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : null);
    const received: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, apiKey: header('x-api-key'), authorization: header('authorization'), bytes: 0, body: undefined };
    requests.push(received);
    const api = req.url?.startsWith('/v1/messages') === true ? 'anthropic' : req.url?.startsWith('/v1/chat/completions') === true ? 'openai' : null;
    const text = await readBody(req, received);
    if (req.method !== 'POST' || api === null) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
    const presented = api === 'anthropic' ? received.apiKey : /^Bearer (.+)$/.exec(received.authorization ?? '')?.[1] ?? null;
    if (presented === null || !sameKey(presented, options.key)) return void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify(unauthorized(api)));
    received.body = parseJson(text);
    const stream = (received.body as { stream?: unknown } | undefined)?.stream === true;
    if (!stream) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(api === 'anthropic' ? anthropicMessage() : openaiCompletion()));
    const held = hold;
    hold = null;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const [first, rest] = api === 'anthropic' ? anthropicEvents() : openaiEvents();
    res.write(first);
    if (held !== null) await held;
    res.end(rest);
  };

  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';
  return {
    port,
    url: `https://${host.includes(':') ? `[${host}]` : host}:${String(port)}`,
    requests,
    holdNextStream: () => {
      let release: () => void = () => undefined;
      hold = new Promise<void>((r) => (release = r));
      return () => release();
    },
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

/** Reads the body as it comes: counts it, keeps at most 1 MiB, pauses every 256 KiB past 1 MiB. */
async function readBody(req: IncomingMessage, into: ReceivedRequest): Promise<string> {
  const kept: Buffer[] = [];
  let sincePause = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    if (into.bytes + buf.length <= MiB) kept.push(buf);
    into.bytes += buf.length;
    sincePause += buf.length;
    if (into.bytes > MiB && sincePause >= 256 * 1024) {
      sincePause = 0;
      await sleep(2); // slowness, not synchronization
    }
  }
  return into.bytes <= MiB ? Buffer.concat(kept).toString('utf8') : '';
}

function sameKey(presented: string, key: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(key);
  return a.length === b.length && timingSafeEqual(a, b);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function unauthorized(api: 'anthropic' | 'openai'): unknown {
  return api === 'anthropic'
    ? { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }
    : { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } };
}

const sse = (event: string | null, data: unknown): string => `${event === null ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

function anthropicMessage(): unknown {
  return { id: 'msg_fake', type: 'message', role: 'assistant', model: 'fake', content: [{ type: 'text', text: 'Hello world' }], stop_reason: 'end_turn', stop_sequence: null, usage: FAKE_USAGE.anthropic };
}

/** The stream in two parts: up to the first text delta, and the rest. */
function anthropicEvents(): [string, string] {
  const start = { type: 'message_start', message: { id: 'msg_fake', type: 'message', role: 'assistant', model: 'fake', content: [], stop_reason: null, usage: { input_tokens: FAKE_USAGE.anthropic.input_tokens, output_tokens: 1 } } };
  const first = [
    sse('message_start', start),
    sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
  ].join('');
  const rest = [
    sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' world' } }),
    sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
    sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: FAKE_USAGE.anthropic.output_tokens } }),
    sse('message_stop', { type: 'message_stop' }),
  ].join('');
  return [first, rest];
}

function openaiCompletion(): unknown {
  return { id: 'chatcmpl-fake', object: 'chat.completion', model: 'fake', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello world' }, finish_reason: 'stop' }], usage: FAKE_USAGE.openai };
}

function openaiEvents(): [string, string] {
  const chunk = (delta: unknown, finish: string | null): unknown => ({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', model: 'fake', choices: [{ index: 0, delta, finish_reason: finish }], usage: null });
  const first = sse(null, chunk({ role: 'assistant', content: 'Hello' }, null));
  const rest = [
    sse(null, chunk({ content: ' world' }, null)),
    sse(null, chunk({}, 'stop')),
    sse(null, { id: 'chatcmpl-fake', object: 'chat.completion.chunk', model: 'fake', choices: [], usage: FAKE_USAGE.openai }),
    sse(null, '[DONE]'),
  ].join('');
  return [first, rest];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const env = (name: string): string => {
    const value = process.env[name];
    if (value === undefined || value === '') throw new Error(`fake-model-api: set ${name}`);
    return value;
  };
  const api = await startFakeModelApi({
    key: env('FAKE_MODEL_API_KEY'),
    cert: readFileSync(env('FAKE_MODEL_API_CERT'), 'utf8'),
    keyPem: readFileSync(env('FAKE_MODEL_API_KEY_PEM'), 'utf8'),
    port: Number(process.env.PORT ?? 8443),
    host: process.env.HOST ?? '0.0.0.0',
  });
  process.stdout.write(`fake-model-api listening on ${api.url}\n`);
  process.once('SIGTERM', () => void api.close().then(() => process.exit(0)));
}
