/**
 * Decoders for the API's streaming bodies (NDJSON and Server-Sent Events) over a web
 * `ReadableStream`, plus base64 helpers. No Node APIs here (browser-safe).
 * @module
 */
import { StreamBrokenError } from './errors.js';

/** Yields each line of a byte stream; throws StreamBrokenError when the connection breaks mid-way. */
async function* readLines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buf = '';
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (err) {
        // The caller's own abort or deadline stays as it is; anything else is the connection going away.
        const name = (err as Error | undefined)?.name;
        if (name === 'AbortError' || name === 'TimeoutError') throw err;
        throw new StreamBrokenError((err as Error | undefined)?.message || 'read failed', { cause: err });
      }
      const { done, value } = chunk;
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, '');
        buf = buf.slice(nl + 1);
        yield line;
      }
    }
    buf += decoder.decode();
    if (buf.length > 0) yield buf;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** Yields the parsed JSON of each NDJSON line. */
export async function* readNdjson(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  for await (const line of readLines(body)) {
    if (line.trim() !== '') yield JSON.parse(line);
  }
}

/** Yields the `data` of each Server-Sent Event (comments and keep-alives are skipped). */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string }> {
  let event = 'message';
  let data: string[] = [];
  for await (const line of readLines(body)) {
    if (line === '') {
      if (data.length > 0) yield { event, data: data.join('\n') };
      event = 'message';
      data = [];
    } else if (line.startsWith(':')) {
      continue;
    } else {
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
  }
}

export function base64ToBytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function bytesToBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}
