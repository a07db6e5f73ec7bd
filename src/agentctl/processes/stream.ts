/**
 * `GET …/processes/{id}/stream?from=N` over WebSocket: replay from N (a `gap` first if N was
 * dropped by retention), then live output, then one `exit` message, then a normal close.
 * @module
 */
import type { WebSocket } from 'ws';
import type { ProcessInfo, StreamMessage } from '../../protocol/index.js';
import { toWireChunk, type StoredChunk } from './output-log.js';
import type { ProcessSupervisor } from './supervisor.js';

/** A client that stops reading is cut off rather than buffered without bound. */
const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;

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
