/**
 * The server name (SNI) of a TLS ClientHello, read from the first bytes a client sends. Pure.
 *
 * The caller buffers the stream's first bytes and calls `peekClientHello` after each chunk until the
 * answer is not `incomplete`. The ClientHello may span several handshake records; the bytes needed
 * are known from the headers, and a hello needing more than `MAX_CLIENT_HELLO_BYTES` is `invalid`, so
 * the caller never buffers more than that.
 * @module
 */

/** The most bytes of a stream's start the proxy buffers to find the ClientHello (16 KiB). */
export const MAX_CLIENT_HELLO_BYTES = 16 * 1024;

export type ClientHelloPeek =
  /** More bytes are needed. */
  | { readonly kind: 'incomplete' }
  /** A whole ClientHello: its host name, or null when it carries no server_name extension. */
  | { readonly kind: 'hello'; readonly serverName: string | null }
  /** The stream does not start with a TLS handshake record (some other protocol). */
  | { readonly kind: 'not-tls' }
  /** A TLS handshake record that is no well-formed ClientHello (or one too large to buffer). */
  | { readonly kind: 'invalid'; readonly reason: string };

const RECORD_HANDSHAKE = 0x16;
const HANDSHAKE_CLIENT_HELLO = 0x01;
const EXT_SERVER_NAME = 0x0000;
const NAME_TYPE_HOST = 0x00;
const RECORD_HEADER = 5;
const MAX_RECORD = 16 * 1024 + 2048; // TLSPlaintext.length limit, with room for TLS 1.2 padding

const INCOMPLETE: ClientHelloPeek = { kind: 'incomplete' };

/** Reads the ClientHello at the start of `data` (the stream's bytes so far). */
export function peekClientHello(data: Uint8Array): ClientHelloPeek {
  if (data.length === 0) return INCOMPLETE;
  if (data[0] !== RECORD_HANDSHAKE) return { kind: 'not-tls' };
  if (data.length >= 2 && data[1] !== 0x03) return { kind: 'not-tls' };
  const joined = joinHandshakeRecords(data);
  if (joined.kind !== 'message') return joined.peek;
  try {
    return { kind: 'hello', serverName: serverNameOf(new Reader(joined.message)) };
  } catch (err) {
    return { kind: 'invalid', reason: err instanceof ParseError ? err.message : 'malformed ClientHello' };
  }
}

/** The handshake message at the stream's start, joined from as many records as it spans. */
function joinHandshakeRecords(data: Uint8Array): { kind: 'message'; message: Uint8Array } | { kind: 'peek'; peek: ClientHelloPeek } {
  const fragments: Uint8Array[] = [];
  let have = 0;
  let need = -1; // the handshake message's total length (header included), once known
  for (let at = 0; ; ) {
    if (data.length < at + RECORD_HEADER) return { kind: 'peek', peek: INCOMPLETE };
    if (data[at] !== RECORD_HANDSHAKE) return invalid('a record other than handshake inside the ClientHello');
    const length = (data[at + 3]! << 8) | data[at + 4]!;
    if (length === 0 || length > MAX_RECORD) return invalid(`a handshake record of ${String(length)} bytes`);
    const end = at + RECORD_HEADER + length;
    if (end > MAX_CLIENT_HELLO_BYTES) return invalid(`a ClientHello over ${String(MAX_CLIENT_HELLO_BYTES)} bytes`);
    if (data.length < end) return { kind: 'peek', peek: INCOMPLETE };
    fragments.push(data.subarray(at + RECORD_HEADER, end));
    have += length;
    if (need < 0 && have >= 4) {
      const head = concat(fragments, 4);
      if (head[0] !== HANDSHAKE_CLIENT_HELLO) return invalid('a handshake message other than ClientHello');
      need = 4 + ((head[1]! << 16) | (head[2]! << 8) | head[3]!);
      if (need > MAX_CLIENT_HELLO_BYTES) return invalid(`a ClientHello over ${String(MAX_CLIENT_HELLO_BYTES)} bytes`);
    }
    if (need >= 0 && have >= need) return { kind: 'message', message: concat(fragments, need).subarray(4) };
    at = end;
  }
}

const invalid = (reason: string): { kind: 'peek'; peek: ClientHelloPeek } => ({ kind: 'peek', peek: { kind: 'invalid', reason } });

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    if (at >= length) break;
    const take = part.subarray(0, length - at);
    out.set(take, at);
    at += take.length;
  }
  return out;
}

/** The server_name of a ClientHello body (after the 4-byte handshake header). */
function serverNameOf(r: Reader): string | null {
  r.skip(2 + 32); // legacy_version, random
  r.skip(r.u8()); // legacy_session_id
  r.skip(r.u16()); // cipher_suites
  r.skip(r.u8()); // legacy_compression_methods
  if (r.remaining() === 0) return null; // no extensions at all (SSL 3.0 style)
  const extensions = r.sub(r.u16());
  let name: string | null = null;
  while (extensions.remaining() > 0) {
    const type = extensions.u16();
    const body = extensions.sub(extensions.u16());
    if (type !== EXT_SERVER_NAME) continue;
    if (name !== null) throw new ParseError('two server_name extensions');
    name = hostNameOf(body);
  }
  return name;
}

function hostNameOf(ext: Reader): string {
  const list = ext.sub(ext.u16());
  let name: string | null = null;
  while (list.remaining() > 0) {
    const type = list.u8();
    const bytes = list.bytes(list.u16());
    if (type !== NAME_TYPE_HOST) continue;
    if (name !== null) throw new ParseError('two host names in server_name');
    if (bytes.length === 0 || bytes.some((b) => b <= 0x20 || b >= 0x7f)) throw new ParseError('a server_name that is no ASCII host name');
    name = String.fromCharCode(...bytes);
  }
  if (name === null) throw new ParseError('a server_name extension without a host name');
  return name;
}

class ParseError extends Error {}

/** A bounds-checked cursor over a byte array: reading past the end throws a ParseError. */
class Reader {
  private at = 0;
  constructor(private readonly buf: Uint8Array) {}
  remaining(): number {
    return this.buf.length - this.at;
  }
  skip(n: number): void {
    this.take(n);
  }
  u8(): number {
    return this.take(1)[0]!;
  }
  u16(): number {
    const b = this.take(2);
    return (b[0]! << 8) | b[1]!;
  }
  bytes(n: number): Uint8Array {
    return this.take(n);
  }
  sub(n: number): Reader {
    return new Reader(this.take(n));
  }
  private take(n: number): Uint8Array {
    if (n > this.remaining()) throw new ParseError('a truncated ClientHello');
    const out = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
}
