/**
 * Helpers over process output chunks: their bytes and text.
 * @module
 */
import type { OutputChunk, OutputStreamName } from '../protocol/index.js';
import { base64ToBytes, bytesToText, concatBytes } from './base64.js';

/** The raw bytes of one output chunk. */
export function chunkBytes(chunk: OutputChunk): Uint8Array {
  return base64ToBytes(chunk.data);
}

/**
 * The UTF-8 text of `chunks` in order, optionally of one stream only. Bytes are joined before
 * decoding so a character split across chunks survives.
 */
export function outputText(chunks: readonly OutputChunk[], stream?: OutputStreamName): string {
  const selected = stream === undefined ? chunks : chunks.filter((c) => c.stream === stream);
  return bytesToText(concatBytes(selected.map(chunkBytes)));
}
