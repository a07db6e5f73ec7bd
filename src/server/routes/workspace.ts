/**
 * The routes that act inside a session's workspace: run a command (`exec`, its output streamed
 * as NDJSON) and write to the agent's stdin (`input`).
 * @module
 */
import type { ServerResponse } from 'node:http';
import type { z } from 'zod';
import { ExecRequestSchema, InputRequestSchema, type ExecMessage } from '../../api/index.js';
import { HttpError, readJson, sendNoContent } from '../../shared/http/index.js';
import { writeLine } from '../backpressure.js';
import { toErrorResponse } from '../error-response.js';
import { toWire } from '../http-util.js';
import { withSession, type ApiHandlers, type ApiService } from './types.js';

/** The largest input; its body may be a little larger (the JSON around it). */
const MAX_INPUT_BYTES = 1 << 20;
const MAX_EXEC_BODY = 16 << 20;

interface WorkspaceDeps {
  readonly service: ApiService;
  /** How often a quiet exec sends a keep-alive. */
  readonly keepAliveMs: number;
}

export function workspaceRoutes(deps: WorkspaceDeps): ApiHandlers<'exec' | 'input'> {
  const { service } = deps;
  return {
    exec: withSession(service, async ({ req, res }, id) => runExec(deps, res, id, await readJson(req, ExecRequestSchema, MAX_EXEC_BODY))),
    input: withSession(service, async ({ req, res }, id) => {
      const body = await readJson(req, InputRequestSchema, MAX_INPUT_BYTES + 1024);
      if (!service.sendInput) throw new HttpError('not_implemented', 'this server cannot send input to agents');
      await service.sendInput(id, body.data, { eof: body.eof ?? false });
      sendNoContent(res);
    }),
  };
}

type ExecBody = z.output<typeof ExecRequestSchema>;

/** `POST …/exec`: the command's output and its exit as NDJSON lines; pings while it is quiet. */
async function runExec({ service, keepAliveMs }: WorkspaceDeps, res: ServerResponse, id: string, body: ExecBody): Promise<void> {
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  // Headers go out with the first output (or the exit), so a refused exec still gets its real status.
  const start = (): void => {
    // x-accel-buffering: nginx (an Ingress) passes each line on at once even where proxy buffering is on.
    if (!res.headersSent) res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
  };
  const line = (m: ExecMessage): Promise<void> => {
    // The client may have gone (Ctrl-C): a write after that would be an 'error' on the response.
    if (res.destroyed || res.writableEnded) return Promise.resolve();
    start();
    // Resolves once a full buffer drained: the service awaits it before it takes more output.
    return writeLine(res, `${JSON.stringify(m)}\n`);
  };
  // A quiet command still gets headers and keep-alives (HTTP clients time out silent responses;
  // a refused exec fails long before the first ping). A stalled client gets none.
  const ping = setInterval(() => {
    if (!res.writableNeedDrain) void line({ type: 'ping' });
  }, keepAliveMs);
  ping.unref();
  let result: { exitCode: number | null; signal: string | null };
  try {
    result = await service.exec(id, body.argv, {
      ...(body.cwd !== undefined ? { cwd: body.cwd } : {}),
      ...(body.env !== undefined ? { env: body.env } : {}),
      ...(body.stdin !== undefined ? { stdin: Buffer.from(body.stdin, 'base64') } : {}),
      signal: abort.signal,
      onOutput: (chunk) => line({ type: 'output', chunk: toWire(chunk) }),
    });
  } catch (err) {
    if (!res.headersSent) throw err;
    void line({ type: 'error', error: toErrorResponse(err).body.error });
    if (!res.destroyed) res.end();
    return;
  } finally {
    clearInterval(ping);
  }
  void line({ type: 'exit', exitCode: result.exitCode, signal: result.signal });
  if (!res.destroyed) res.end();
}
