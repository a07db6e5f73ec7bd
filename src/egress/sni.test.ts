import { Duplex } from 'node:stream';
import { connect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { MAX_CLIENT_HELLO_BYTES, peekClientHello } from './sni.js';

/** The first bytes node's TLS client sends (its real ClientHello), captured from an in-memory socket. */
function clientHello(servername?: string): Promise<Buffer> {
  return new Promise((resolve) => {
    const socket = new Duplex({
      read: () => undefined,
      write(chunk: Buffer, _enc, cb) {
        resolve(chunk);
        cb();
        setImmediate(() => tls.destroy());
      },
    });
    const tls = connect({ socket, rejectUnauthorized: false, ...(servername === undefined ? {} : { servername }) });
    tls.on('error', () => undefined);
  });
}

/** The same ClientHello cut into TLS records of at most `size` handshake bytes each. */
function fragment(hello: Buffer, size: number): Buffer {
  const message = hello.subarray(5);
  const records: Buffer[] = [];
  for (let at = 0; at < message.length; at += size) {
    const part = message.subarray(at, at + size);
    records.push(Buffer.from([0x16, 0x03, 0x01, part.length >> 8, part.length & 0xff]), part);
  }
  return Buffer.concat(records);
}

describe('peekClientHello', () => {
  it('reads the SNI of a real ClientHello, and null without one', async () => {
    expect(peekClientHello(await clientHello('api.example.com'))).toEqual({ kind: 'hello', serverName: 'api.example.com' });
    expect(peekClientHello(await clientHello())).toEqual({ kind: 'hello', serverName: null });
  });

  it('answers incomplete for every strict prefix, then the name', async () => {
    const hello = await clientHello('split.example.com');
    for (const cut of [0, 1, 4, 5, 6, 40, hello.length - 1]) expect(peekClientHello(hello.subarray(0, cut))).toEqual({ kind: 'incomplete' });
    expect(peekClientHello(Buffer.concat([hello, Buffer.from('trailing bytes')]))).toEqual({ kind: 'hello', serverName: 'split.example.com' });
  });

  it('joins a ClientHello fragmented over several records', async () => {
    const split = fragment(await clientHello('frag.example.com'), 50);
    expect(peekClientHello(split.subarray(0, split.length - 1))).toEqual({ kind: 'incomplete' });
    expect(peekClientHello(split)).toEqual({ kind: 'hello', serverName: 'frag.example.com' });
  });

  it('tells other protocols from TLS', () => {
    expect(peekClientHello(Buffer.from('GET / HTTP/1.1\r\n'))).toEqual({ kind: 'not-tls' });
    expect(peekClientHello(Buffer.from('SSH-2.0-OpenSSH_9.6\r\n'))).toEqual({ kind: 'not-tls' });
    expect(peekClientHello(Buffer.from([0x16, 0x42]))).toEqual({ kind: 'not-tls' });
  });

  it('refuses malformed and oversized hellos without waiting for more bytes', async () => {
    const hello = await clientHello('x.example.com');
    const notHello = Buffer.from(hello);
    notHello[5] = 0x02; // ServerHello
    expect(peekClientHello(notHello).kind).toBe('invalid');
    const truncated = Buffer.from(hello);
    truncated[8] = truncated[8]! - 60; // the handshake claims fewer bytes than its fields need
    expect(peekClientHello(truncated)).toEqual({ kind: 'invalid', reason: 'a truncated ClientHello' });
    const huge = Buffer.from([0x16, 0x03, 0x01, 0x40, 0x00, 0x01, 0x01, 0x00, 0x00]);
    expect(peekClientHello(huge).kind).toBe('invalid');
    const bigRecord = Buffer.from([0x16, 0x03, 0x01, 0x48, 0x01]);
    expect(peekClientHello(bigRecord)).toEqual({ kind: 'invalid', reason: 'a handshake record of 18433 bytes' });
    const alert = Buffer.concat([fragment(hello, 20).subarray(0, 25), Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28])]);
    expect(peekClientHello(alert).kind).toBe('invalid');
    expect(MAX_CLIENT_HELLO_BYTES).toBe(16 * 1024);
  });
});
