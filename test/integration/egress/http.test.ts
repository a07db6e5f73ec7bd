/**
 * The egress proxy's plain-HTTP path against real servers on 127.0.0.1: requests are forwarded
 * without the proxy credential or hop-by-hop headers; 50 MB bodies stream both ways with the proxy's
 * buffers bounded (sampled from `stats()` while the transfer runs, with the slower side pausing so
 * backpressure must hold); a stalled upstream of one session does not hold up another session.
 */
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpThrough, listen, startProxy, type TestProxy } from './support.js';

const MB = 1024 * 1024;
const BIG = 50 * MB;
const CHUNK = Buffer.alloc(64 * 1024, 'x');
/** The most the proxy may hold for one transfer: a few stream high-water marks and socket reads. */
const BUFFER_BOUND = 1 * MB;

let upstream: Server;
let t: TestProxy;
let alice: string;
let bob: string;
const seen: IncomingMessage[] = [];
let releaseStalled: (() => void) | null = null;
let stalledArrived: Promise<void>;
let markStalledArrived: () => void = () => undefined;
let maxBuffered = 0;

function sample(): void {
  maxBuffered = Math.max(maxBuffered, t.proxy.stats().bufferedBytes);
}

/** A body of `size` bytes, produced on demand (never held whole). */
const body = (size: number): Readable =>
  Readable.from((function* () {
    for (let sent = 0; sent < size; sent += CHUNK.length) yield CHUNK.subarray(0, Math.min(CHUNK.length, size - sent));
  })());

/** Reads a stream slowly: a pause every 256 KiB so the proxy must hold back the faster side. */
async function slowCount(stream: Readable): Promise<number> {
  let total = 0;
  let sincePause = 0;
  for await (const chunk of stream) {
    total += (chunk as Buffer).length;
    sincePause += (chunk as Buffer).length;
    sample();
    if (sincePause >= 256 * 1024) {
      sincePause = 0;
      await sleep(2); // slowness, not synchronization: nothing waits on this
    }
  }
  return total;
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  seen.push(req);
  if (req.url === '/upload') return void res.end(`received ${String(await slowCount(req))}`);
  if (req.url === '/download') return void body(BIG).pipe(res.writeHead(200, { 'content-length': String(BIG) }));
  if (req.url === '/stall') {
    markStalledArrived();
    await new Promise<void>((resolve) => (releaseStalled = resolve));
    return void res.end('late');
  }
  res.setHeader('x-upstream-connection', req.headers.connection ?? '');
  res.end(`hello ${req.method ?? ''} ${req.url ?? ''} host=${req.headers.host ?? ''}`);
}

beforeAll(async () => {
  stalledArrived = new Promise((resolve) => (markStalledArrived = resolve));
  upstream = createServer((req, res) => void route(req, res));
  const port = await listen(upstream);
  t = await startProxy(new Map([['allowed.test:80', port], ['slow.test:80', port], ['allowed.test:8080', port]]));
  alice = t.sessions.add('alice', 'alice-secret-token', ['allowed.test']);
  bob = t.sessions.add('bob', 'bob-secret-token', ['slow.test']);
});

afterAll(async () => {
  releaseStalled?.();
  await t?.proxy.close();
  upstream?.close();
});

describe('plain HTTP', () => {
  it('forwards a GET without the credential or hop-by-hop headers, and records it', async () => {
    const reply = await httpThrough(t.port, 'http://Allowed.Test:8080/a?b=1', {
      headers: { 'proxy-authorization': alice, 'proxy-connection': 'keep-alive', connection: 'x-secret-hop', 'x-secret-hop': '1', 'x-kept': 'yes' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toBe('hello GET /a?b=1 host=allowed.test:8080');
    const req = seen.at(-1)!;
    expect(req.headers['proxy-authorization']).toBeUndefined();
    expect(req.headers['proxy-connection']).toBeUndefined();
    expect(req.headers['x-secret-hop']).toBeUndefined();
    expect(req.headers['x-kept']).toBe('yes');
    const record = await t.records.next((r) => r.method === 'GET' && r.port === 8080);
    expect(record).toMatchObject({ sessionId: 'alice', host: 'allowed.test', allowed: true, status: 200 });
    expect(record.bytesUp).toBeGreaterThan(0);
    expect(record.bytesDown).toBeGreaterThan(0);
  });

  it('denies by allow list (403), credential (407) and https:// URIs (400)', async () => {
    const off = await httpThrough(t.port, 'http://slow.test/', { headers: { 'proxy-authorization': alice } });
    expect([off.status, off.body]).toEqual([403, "slow.test is not on this session's allow list\n"]);
    const otherHost = await httpThrough(t.port, 'http://allowed.test/h', { headers: { 'proxy-authorization': alice, host: 'slow.test' } });
    expect(otherHost.body).toBe('hello GET /h host=allowed.test'); // the URI decides; Host is replaced
    const none = await httpThrough(t.port, 'http://allowed.test/');
    expect(none.status).toBe(407);
    expect(none.headers['proxy-authenticate']).toBe('Basic realm="berth-egress"');
    const https = await httpThrough(t.port, 'https://allowed.test/', { headers: { 'proxy-authorization': alice } });
    expect([https.status, https.body]).toEqual([400, 'use CONNECT for https:// URLs\n']);
  });

  it('streams a 50 MB upload to a slow upstream with bounded proxy buffers', async () => {
    maxBuffered = 0;
    const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: 'http://allowed.test/upload', agent: false, headers: { host: 'allowed.test', 'proxy-authorization': alice } });
    body(BIG).pipe(req);
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    let text = '';
    for await (const chunk of res) text += (chunk as Buffer).toString();
    expect(text).toBe(`received ${String(BIG)}`);
    const record = await t.records.next((r) => r.method === 'POST');
    expect(record.bytesUp).toBeGreaterThan(BIG);
    expect(maxBuffered).toBeGreaterThan(0);
    expect(maxBuffered).toBeLessThan(BUFFER_BOUND);
    console.log(`egress upload: max proxy buffer ${String(maxBuffered)} bytes over a ${String(BIG)}-byte body`);
  });

  it('streams a 50 MB download to a slow client with bounded proxy buffers', async () => {
    maxBuffered = 0;
    const req = request({ host: '127.0.0.1', port: t.port, path: 'http://allowed.test/download', agent: false, headers: { host: 'allowed.test', 'proxy-authorization': alice } });
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    expect(res.headers['content-length']).toBe(String(BIG));
    expect(await slowCount(res)).toBe(BIG);
    const record = await t.records.next((r) => r.method === 'GET' && r.bytesDown > BIG);
    expect(record).toMatchObject({ sessionId: 'alice', allowed: true, status: 200 });
    expect(maxBuffered).toBeGreaterThan(0);
    expect(maxBuffered).toBeLessThan(BUFFER_BOUND);
    console.log(`egress download: max proxy buffer ${String(maxBuffered)} bytes over a ${String(BIG)}-byte body`);
  });

  it('serves one session while another waits on a stalled upstream, then both finish', async () => {
    const stalled = httpThrough(t.port, 'http://slow.test/stall', { headers: { 'proxy-authorization': bob } });
    await stalledArrived;
    const other = await httpThrough(t.port, 'http://allowed.test/quick', { headers: { 'proxy-authorization': alice } });
    expect(other.body).toBe('hello GET /quick host=allowed.test');
    expect(t.proxy.stats().openConnections).toBe(1); // bob's request is still open
    releaseStalled!();
    expect((await stalled).body).toBe('late');
    expect(await t.records.next((r) => r.sessionId === 'bob' && r.status === 200)).toMatchObject({ host: 'slow.test', allowed: true });
  });

  it('closes a revoked session\'s open request', async () => {
    const carol = t.sessions.add('carol', 'carol-secret-token', ['slow.test']);
    stalledArrived = new Promise((resolve) => (markStalledArrived = resolve));
    const stalled = httpThrough(t.port, 'http://slow.test/stall', { headers: { 'proxy-authorization': carol } });
    await stalledArrived;
    expect(t.sessions.revoke('carol')).toBe(1);
    await expect(stalled).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(await t.records.next((r) => r.sessionId === 'carol')).toMatchObject({ reason: 'revoked', allowed: true });
    expect((await httpThrough(t.port, 'http://slow.test/stall', { headers: { 'proxy-authorization': carol } })).status).toBe(407);
    releaseStalled!();
  });
});
