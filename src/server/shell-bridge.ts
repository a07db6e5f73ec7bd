/**
 * Bridges one shell WebSocket (ShellClientMessage in, ShellServerMessage out) to a ShellSession
 * of the session service: keystrokes stream straight into the workspace process over agentctl's
 * stream socket, and the PTY's output streams back.
 * @module
 */
import type { WebSocket } from 'ws';
import type { SessionService, ShellSession } from '../controller/index.js';
import { sendWithin } from './backpressure.js';
import { toErrorResponse } from './error-response.js';
import { toWire } from './http-util.js';
import { ShellClientMessageSchema, type ShellClientMessage, type ShellServerMessage } from '../api/index.js';

interface ShellRequest {
  id: string;
  rows: number;
  cols: number;
  term?: string;
}

/** Where the bridge reports a socket that failed (a pino logger fits). */
export interface BridgeLogger {
  warn(obj: object, msg?: string): void;
}

/**
 * Runs a shell for `ws` until the shell exits or the socket closes; always closes the socket.
 * The PTY's output is read no faster than the client takes it (see `sendWithin`).
 */
export async function bridgeShell(ws: WebSocket, service: SessionService, req: ShellRequest, log?: BridgeLogger): Promise<void> {
  // An oversized (1009) or malformed (1002) frame, or a peer that reset: `ws` closes this socket
  // with the right code and emits 'error', which without a listener would end the whole server.
  ws.on('error', (err: Error & { code?: string }) => log?.warn({ sessionId: req.id, code: err.code, error: err.message }, 'shell socket failed'));
  const send = (m: ShellServerMessage): void => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(m));
  };
  // Listen before the shell exists: input sent right after the upgrade is queued, not lost.
  let shell: ShellSession | undefined;
  const early: ShellClientMessage[] = [];
  let closed = false;
  const apply = (msg: ShellClientMessage): void => {
    if (!shell) {
      early.push(msg);
      return;
    }
    switch (msg.type) {
      case 'stdin':
        shell.write(Buffer.from(msg.data, 'base64'));
        break;
      case 'resize':
        shell.resize(msg.rows, msg.cols);
        break;
      case 'eof':
        shell.end();
        break;
      default:
        assertNever(msg);
    }
  };
  ws.on('message', (raw) => {
    let msg: ShellClientMessage;
    try {
      msg = ShellClientMessageSchema.parse(JSON.parse(String(raw)));
    } catch {
      send({ type: 'error', error: { code: 'bad_request', message: 'malformed shell message' } });
      return;
    }
    apply(msg);
  });
  ws.on('close', () => {
    closed = true;
    shell?.close();
  });
  try {
    await service.get(req.id);
    shell = await service.openShell(req.id, {
      rows: req.rows,
      cols: req.cols,
      ...(req.term !== undefined && /^[A-Za-z0-9._+-]{1,64}$/.test(req.term) ? { term: req.term } : {}),
    });
  } catch (err) {
    send({ type: 'error', error: toErrorResponse(err).body.error });
    ws.close(1011);
    return;
  }
  if (closed) shell.close();
  for (const msg of early.splice(0)) apply(msg);
  try {
    for await (const chunk of shell.output) await sendWithin(ws, JSON.stringify({ type: 'output', chunk: toWire(chunk) } satisfies ShellServerMessage));
    const r = await shell.exit;
    send({ type: 'exit', exitCode: r.exitCode, signal: r.signal });
  } catch (err) {
    send({ type: 'error', error: toErrorResponse(err).body.error });
  }
  ws.close(1000);
}

function assertNever(value: never): never {
  throw new Error(`unhandled shell message ${JSON.stringify(value)}`);
}
