/**
 * The scripted model server: node:http on a given host (loopback by default) and port 0, speaking
 * the Anthropic Messages API (Claude Code) or the OpenAI Responses API (Codex) from a list of
 * turns, recording every request. Typical use:
 *
 *   const model = await startModelServer({ api: 'anthropic', turns: [[{ tool: 'Bash', input: { command: 'touch x' } }, { text: 'DONE' }]] });
 *   // ANTHROPIC_BASE_URL=model.url … ; later: model.log.main()[1].body, model.log.credentialsAll(key)
 *   await model.close();
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicResponse, classifyMessages } from './anthropic.js';
import { RequestLog, ScriptStepper, type RecordedRequest, type Reply, type Turn } from './core.js';
import { classifyResponses, openaiResponse } from './openai.js';

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface ModelServerOptions {
  api: 'anthropic' | 'openai';
  turns: readonly Turn[];
  /** @default '127.0.0.1' */
  host?: string;
}

export interface ModelServer {
  /** `http://host:port`: Claude Code's ANTHROPIC_BASE_URL (it adds /v1/messages). */
  url: string;
  /** `http://host:port/v1`: a Codex provider's base_url (it adds /responses). */
  v1: string;
  log: RequestLog;
  /** Starts over with `turns`: a new script and an empty log (one server serving test after test). */
  reset(turns: readonly Turn[]): void;
  /** Resolves with the first request (in order of arrival) matching `test`, waiting up to `ms`. */
  waitFor(what: string, test: (r: RecordedRequest, index: number) => boolean, ms?: number): Promise<RecordedRequest>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export async function startModelServer(opts: ModelServerOptions): Promise<ModelServer> {
  let log = new RequestLog();
  let stepper = new ScriptStepper(opts.turns);
  const waiters = new Set<() => void>();
  let n = 0;

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = parseJson(await readBody(req));
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const cls = opts.api === 'anthropic' ? classifyMessages(path, body) : classifyResponses(method, path, body);
    const request = log.record(method, path, req.headers, body, cls.kind);
    let reply: Reply | null = null;
    if (cls.kind === 'main') {
      const step = stepper.next(cls.startsTurn);
      request.step = { turn: step.turn, reply: step.index };
      reply = step.reply;
    }
    n += 1;
    const out = opts.api === 'anthropic' ? anthropicResponse(request, reply, n) : openaiResponse(request, reply, n);
    res.writeHead(out.status, out.headers);
    res.end(out.body);
    for (const wake of [...waiters]) wake();
  };

  const server = createServer((req, res) => {
    answer(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: err instanceof Error ? err.message : 'error' } }));
    });
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  const waitFor = (what: string, test: (r: RecordedRequest, index: number) => boolean, ms = 60_000): Promise<RecordedRequest> =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = log.requests.find(test);
        if (found === undefined) return false;
        clearTimeout(timer);
        waiters.delete(wake);
        resolve(found);
        return true;
      };
      const wake = (): void => void check();
      const timer = setTimeout(() => {
        waiters.delete(wake);
        reject(new Error(`model server: timed out after ${ms} ms waiting for ${what} (${log.requests.length} requests seen)`));
      }, ms);
      waiters.add(wake);
      check();
    });

  return {
    url,
    v1: `${url}/v1`,
    get log() {
      return log;
    },
    reset: (turns) => {
      log = new RequestLog();
      stepper = new ScriptStepper(turns);
    },
    waitFor,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
