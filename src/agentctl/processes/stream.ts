/**
 * `GET …/processes/{id}/stream?from=N` over WebSocket: replay from N (a `gap` first if N was
 * dropped by retention), then live output, then one `exit` message, then a normal close. The
 * same socket takes StreamClientMessage frames the other way (stdin, eof, signal).
 * @module
 */
import type { RawData, WebSocket } from 'ws';
import { StreamClientMessageSchema, type ProcessInfo, type StreamClientMessage, type StreamMessage } from '../../protocol/index.js';
import { isProtocolError } from '../errors.js';
import { toWireChunk, type StoredChunk } from './output-log.js';
import type { ProcessSupervisor } from './supervisor.js';

/** A client that stops reading is cut off rather than buffered without bound. */
const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;
/**
 * Stdin accepted but not yet taken by the process. Past this the socket stops reading (TCP
 * backpressure reaches the client) until the process catches up.
 */
const MAX_PENDING_STDIN_BYTES = 1024 * 1024;

export function streamProcess(ws: WebSocket, supervisor: ProcessSupervisor, id: string, from: number): void {
  let open = true;
  const send = (message: StreamMessage): void => {
    if (!open) return;
    if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      open = false;
      ws.close(1008, 'client is not keeping up with the output');
      return;
    }
    ws.send(JSON.stringify(message));
  };
  const finish = (info: ProcessInfo): void => {
    send({ type: 'exit', exit_code: info.exit_code, signal: info.signal, next: info.next_seq });
    if (open) ws.close(1000, 'process exited');
    open = false;
  };
  const replay = (chunks: readonly StoredChunk[], firstAvailable: number): void => {
    if (from < firstAvailable) send({ type: 'gap', from, to: firstAvailable });
    for (const chunk of chunks) send({ type: 'output', chunk: toWireChunk(chunk) });
  };

  // Frames after the exit (the socket is closing) are not answered: `send` is closed by then.
  const input = new StdinPump(supervisor, id, ws, (code, message) => send({ type: 'error', code, message }));
  ws.on('message', (raw: RawData, isBinary: boolean) => input.receive(raw, isBinary));
  const unsubscribe = supervisor.follow(id, from, { chunk: (c) => send({ type: 'output', chunk: toWireChunk(c) }), exit: finish }, replay);
  ws.on('close', () => {
    open = false;
    unsubscribe?.();
  });
  ws.on('error', () => {
    open = false;
    unsubscribe?.();
  });
}

/** Applies client frames to the process in arrival order, pausing the socket while stdin is backed up. */
class StdinPump {
  #pending = 0;
  #paused = false;

  constructor(
    private readonly supervisor: ProcessSupervisor,
    private readonly id: string,
    private readonly ws: WebSocket,
    private readonly reply: (code: string, message: string) => void,
  ) {}

  receive(raw: RawData, isBinary: boolean): void {
    let message: StreamClientMessage;
    try {
      if (isBinary) throw new Error('binary frame');
      const parsed = StreamClientMessageSchema.safeParse(JSON.parse(rawText(raw)));
      if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? 'invalid');
      message = parsed.data;
    } catch (err) {
      // Never echo the frame itself: it may hold stdin bytes such as a typed password.
      const detail = err instanceof SyntaxError ? 'not JSON' : (err as Error).message;
      this.reply('bad_request', `malformed stream message (${detail}); expected {"type":"stdin"|"eof"|"signal",…}`);
      return;
    }
    this.#apply(message);
  }

  #apply(message: StreamClientMessage): void {
    switch (message.type) {
      case 'stdin': {
        const data = Buffer.from(message.data, 'base64');
        this.#write(data, false);
        return;
      }
      case 'eof':
        this.#write(Buffer.alloc(0), true);
        return;
      case 'signal':
        try {
          this.supervisor.signal(this.id, message.signal);
        } catch (err) {
          this.#fail(err);
        }
        return;
      default:
        assertNever(message);
    }
  }

  /** `writeStdin` queues synchronously, so successive frames reach the process in order. */
  #write(data: Buffer, eof: boolean): void {
    this.#pending += data.length;
    if (!this.#paused && this.#pending > MAX_PENDING_STDIN_BYTES) {
      this.#paused = true;
      this.ws.pause();
    }
    this.supervisor
      .writeStdin(this.id, data, eof)
      .catch((err: unknown) => this.#fail(err))
      .finally(() => {
        this.#pending -= data.length;
        if (this.#paused && this.#pending <= MAX_PENDING_STDIN_BYTES / 2) {
          this.#paused = false;
          this.ws.resume();
        }
      });
  }

  #fail(err: unknown): void {
    if (isProtocolError(err)) this.reply(err.code, err.message);
    else this.reply('internal', 'cannot apply the stream message');
  }
}

function rawText(raw: RawData): string {
  if (Array.isArray(raw)) return Buffer.concat(raw).toString('utf8');
  return Buffer.from(raw as ArrayBuffer).toString('utf8');
}

function assertNever(value: never): never {
  throw new Error(`unhandled stream message ${JSON.stringify(value)}`);
}
