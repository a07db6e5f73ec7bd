/**
 * Flow control from a slow API client back to agentctl: a streaming route writes a line and, when
 * the response's buffer is full, waits for it to drain before it pulls the next chunk. The pull
 * stops, the agentctl client's queue fills and pauses its socket, and agentctl feels TCP
 * backpressure — so what serve holds per client stays bounded however slowly the client reads.
 * @module
 */
import type { Writable } from 'node:stream';
import type { WebSocket } from 'ws';

/** Resolves once `stream` can take more (at once when it can), or when it closes. */
function drained(stream: Writable): Promise<void> {
  if (!stream.writableNeedDrain || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}

/** Writes `text` unless the stream is over; resolves once the stream can take more. */
export function writeLine(stream: Writable, text: string): Promise<void> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve();
  if (stream.write(text)) return Promise.resolve();
  return drained(stream);
}

/** Unsent bytes a shell socket may hold before the bridge stops reading the shell's output. */
const MAX_WS_UNSENT_BYTES = 1 << 20;

/**
 * Sends `text` on `ws`. Resolves at once while at most `limit` bytes wait to go out; past that,
 * once this frame (and so everything before it) is written out, or the socket closes. Nothing is
 * sent on a socket that is not open.
 */
export function sendWithin(ws: WebSocket, text: string, limit = MAX_WS_UNSENT_BYTES): Promise<void> {
  if (ws.readyState !== ws.OPEN) return Promise.resolve();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      ws.off('close', finish);
      resolve();
    };
    ws.on('close', finish);
    ws.send(text, finish);
    if (ws.bufferedAmount <= limit) finish();
  });
}
