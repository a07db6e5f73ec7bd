/**
 * The egress proxy under load, in this process against real servers on 127.0.0.1: 200 sessions with
 * their own credentials tunnel at once (TLS with SNI on port 443, raw TCP on 7000) and every tunnel is
 * recorded under its own session with the bytes its upstream saw; a 300 MB plain-HTTP upload to an
 * upstream that reads slowly and a 300 MB tunnel download to a client that reads slowly run side by
 * side while the proxy's buffered bytes and the process's RSS are sampled; revoking a session
 * mid-transfer closes its tunnels and the other sessions' transfers go on. Bodies are made as they
 * stream (one reused chunk), never held whole. Nothing here judges a time: the test timeout is the
 * only clock.
 */
import { EventEmitter, once } from 'node:events';
import { request, createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { Readable, type Duplex } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { connect as tlsConnect, createSecureContext, TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CLIENT_HELLO_BYTES } from '../../../src/egress/sni.js';
import type { EgressRecord } from '../../../src/egress/index.js';
import { connectThrough, listen, selfSignedCert, startProxy, type TestCert, type TestProxy } from './support.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const BODY = 300 * MiB;
const SESSIONS = 200;
/** The one chunk every generated body is made of (reused: nothing is held beyond it). */
const CHUNK = Buffer.alloc(64 * KiB, 'berth load ');
/** A slow reader stops for PAUSE_MS after every PAUSE_EVERY bytes. */
const PAUSE_EVERY = MiB;
const PAUSE_MS = 10;

/**
 * What the proxy may hold for one open connection. `buffered()` sums at most ten stream buffers (a
 * tunnel: both sockets, readable and writable; a plain-HTTP request: both sockets, the request and
 * response bodies, and the two HTTP messages' writable lengths, which include their sockets' again).
 * With backpressure each holds at most its high-water mark (16 KiB in Node 20, 64 KiB from Node 22)
 * plus the one chunk that crossed it (at most 64 KiB: one socket read), so 10 × 128 KiB; a tunnel
 * also holds its ClientHello peek (MAX_CLIENT_HELLO_BYTES plus one read) until it is checked. About
 * 1.3 MiB, whatever the body size.
 */
const PER_CONNECTION_BOUND = 10 * (64 + 64) * KiB + MAX_CLIENT_HELLO_BYTES + 64 * KiB;
/** RSS growth allowed while 600 MB (300 up, 300 down) move through the proxy and this process. */
const RSS_GROWTH_BOUND = 100 * MiB;

const ignore = (): void => undefined;

/** `size` bytes (Infinity: endless) made as they are read. */
function generated(size: number): Readable {
  let left = size;
  return new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const n = Math.min(left, CHUNK.length);
      left -= n;
      this.push(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n));
    },
  });
}

/** A point where a slow reader stops reading altogether: at `at` bytes it calls `reached` and waits for `release`. */
interface Hold {
  readonly at: number;
  readonly reached: () => void;
  readonly release: Promise<void>;
}

/** Reads `stream` to its end, pausing PAUSE_MS after every PAUSE_EVERY bytes (and at `hold`); resolves with the count. */
function readSlowly(stream: Readable | Duplex, hold?: Hold): Promise<number> {
  return new Promise((resolve, reject) => {
    let n = 0;
    let sincePause = 0;
    let holding = false;
    stream.on('data', (chunk: Buffer) => {
      n += chunk.length;
      sincePause += chunk.length;
      if (hold !== undefined && !holding && n >= hold.at && n - chunk.length < hold.at) {
        holding = true;
        stream.pause();
        hold.reached();
        void hold.release.then(() => {
          holding = false;
          stream.resume();
        });
      }
      if (sincePause < PAUSE_EVERY) return;
      sincePause = 0;
      stream.pause();
      setTimeout(() => holding || stream.resume(), PAUSE_MS);
    });
    stream.once('end', () => resolve(n));
    stream.once('error', reject);
  });
}

/** A promise with its resolve function. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = ignore;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** The first line a socket sends (without the newline); the bytes after it are left unread in flowing mode. */
function firstLine(socket: Duplex): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      const nl = text.indexOf('\n');
      if (nl < 0) return;
      socket.off('data', onData);
      resolve(text.slice(0, nl));
    };
    socket.on('data', onData);
  });
}

/** The next `length` bytes a socket sends, as text. */
function readText(socket: Duplex, length: number): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      if (text.length < length) return;
      socket.off('data', onData);
      resolve(text);
    };
    socket.on('data', onData);
  });
}

/** Resolves once `done()` holds, checking it at each `event` of `emitter`. */
async function until(emitter: EventEmitter, event: string, done: () => boolean): Promise<void> {
  while (!done()) await once(emitter, event);
}

/**
 * An echo upstream (TLS when given a certificate): each connection's first line names its session,
 * and when the connection closes the bytes its raw socket read and wrote are kept under that name
 * (what the proxy's record must say).
 */
class EchoUpstream extends EventEmitter {
  readonly seen = new Map<string, { bytesIn: number; bytesOut: number }>();
  readonly server: NetServer;

  constructor(cert?: TestCert) {
    super();
    const context = cert === undefined ? undefined : createSecureContext({ key: cert.key, cert: cert.cert });
    this.server = createNetServer((raw) => {
      raw.on('error', ignore);
      const conn = context === undefined ? raw : new TLSSocket(raw, { isServer: true, secureContext: context });
      conn.on('error', ignore);
      let id = '';
      void firstLine(conn).then((line) => (id = line));
      conn.on('data', (chunk: Buffer) => conn.write(chunk));
      conn.on('end', () => conn.end());
      raw.on('close', () => {
        this.seen.set(id, { bytesIn: raw.bytesRead, bytesOut: raw.bytesWritten });
        this.emit('closed');
      });
    });
  }
}

/** The proxy's stats and this process's RSS, sampled every few milliseconds while something runs. */
class Sampler {
  samples = 0;
  maxBuffered = 0;
  maxOpen = 0;
  /** Samples whose buffered bytes exceed PER_CONNECTION_BOUND per open connection. */
  overBound = 0;
  maxRss = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly t: TestProxy) {
    this.timer = setInterval(() => this.sample(), 5);
  }

  sample(): void {
    const { openConnections, bufferedBytes } = this.t.proxy.stats();
    this.samples += 1;
    this.maxBuffered = Math.max(this.maxBuffered, bufferedBytes);
    this.maxOpen = Math.max(this.maxOpen, openConnections);
    if (bufferedBytes > PER_CONNECTION_BOUND * openConnections) this.overBound += 1;
    this.maxRss = Math.max(this.maxRss, process.memoryUsage().rss);
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }
}

let cert: TestCert;
let tlsEcho: EchoUpstream;
let tcpEcho: EchoUpstream;
let uploads: HttpServer;
let downloads: NetServer;
let t: TestProxy;
/** What the upload upstream counted for each request once it answered: body bytes, and its socket's bytes in and out. */
const uploaded: { body: number; socketIn: number; socketOut: number }[] = [];
const uploadEvents = new EventEmitter();

beforeAll(async () => {
  cert = selfSignedCert(['echo.test']);
  tlsEcho = new EchoUpstream(cert);
  tcpEcho = new EchoUpstream();
  uploads = createHttpServer((req, res) => {
    void readSlowly(req).then((body) => {
      const socketIn = req.socket.bytesRead;
      res.on('finish', () => {
        uploaded.push({ body, socketIn, socketOut: req.socket.bytesWritten });
        uploadEvents.emit('uploaded');
      });
      res.end(String(body));
    });
  });
  // "GET <bytes>\n" (or "GET forever\n") answers that many generated bytes, with backpressure.
  downloads = createNetServer((socket) => {
    socket.on('error', ignore);
    void firstLine(socket).then((line) => {
      const n = Number(line.slice('GET '.length));
      return pipeline(generated(Number.isFinite(n) ? n : Infinity), socket);
    }).catch(ignore);
  });
  const routes = new Map([
    ['echo.test:443', await listen(tlsEcho.server)],
    ['echo.test:7000', await listen(tcpEcho.server)],
    ['upload.test:80', await listen(uploads)],
    ['download.test:9000', await listen(downloads)],
  ]);
  // Generous timeouts: the file shares the CPUs with the suite, and a held transfer is not idle.
  t = await startProxy(routes, { connectTimeoutMs: 60_000, idleTimeoutMs: 600_000 });
});

afterAll(async () => {
  await t?.proxy.close();
  for (const server of [tlsEcho?.server, tcpEcho?.server, uploads, downloads]) server?.close();
});

const auth = (id: string): string => t.sessions.add(id, `${id}-secret-token-${String(Math.random()).slice(2)}`, ['echo.test', 'upload.test', 'download.test']);

/** The records of connections that ended, once there are `count` of them for sessions `match` accepts. */
async function recordsOf(match: (sessionId: string | null) => boolean, count: number): Promise<EgressRecord[]> {
  const mine = (): EgressRecord[] => t.records.all.filter((r) => match(r.sessionId));
  await until(t.records, 'record', () => mine().length >= count);
  return mine();
}

/** Sends "<id>\n<payload>" through a tunnel (TLS over it on port 443), checks the echo and ends the tunnel. */
async function echoThrough(id: string, credential: string, port: 443 | 7000, payload: Buffer): Promise<void> {
  const tunnel = await connectThrough(t.port, `echo.test:${String(port)}`, credential);
  expect(tunnel.status).toBe(200);
  let conn: Socket = tunnel.socket;
  if (port === 443) {
    conn = tlsConnect({ socket: tunnel.socket, servername: 'echo.test', ca: cert.cert });
    await once(conn, 'secureConnect');
  }
  const sent = Buffer.concat([Buffer.from(`${id}\n`), payload]);
  const echoed: Buffer[] = [];
  let received = 0;
  const closed = once(conn, 'close');
  const all = new Promise<void>((resolve) =>
    conn.on('data', (chunk: Buffer) => {
      echoed.push(chunk);
      received += chunk.length;
      if (received >= sent.length) resolve();
    }),
  );
  conn.write(sent);
  await all;
  conn.end();
  await closed;
  expect(Buffer.concat(echoed).equals(sent)).toBe(true);
}

describe('the egress proxy under load', () => {
  it('tunnels for 200 sessions at once and records each under its own session with its upstream bytes', async () => {
    const ids = Array.from({ length: SESSIONS }, (_, i) => `load-${String(i)}`);
    const port = (i: number): 443 | 7000 => (i % 2 === 0 ? 443 : 7000);
    // A different payload size per session: a record filed under the wrong session would not match.
    await Promise.all(ids.map((id, i) => echoThrough(id, auth(id), port(i), Buffer.alloc(KiB * (1 + (i % 50)) + i, i))));
    const records = await recordsOf((s) => s?.startsWith('load-') === true, SESSIONS);
    expect(records).toHaveLength(SESSIONS);
    await until(tlsEcho, 'closed', () => tlsEcho.seen.size >= SESSIONS / 2);
    await until(tcpEcho, 'closed', () => tcpEcho.seen.size >= SESSIONS / 2);
    ids.forEach((id, i) => {
      const record = records.find((r) => r.sessionId === id);
      const upstream = (port(i) === 443 ? tlsEcho : tcpEcho).seen.get(id);
      expect(record).toMatchObject({ method: 'CONNECT', host: 'echo.test', port: port(i), allowed: true, status: 200 });
      expect(record?.reason).toBeUndefined();
      expect(upstream).toBeDefined();
      expect([record?.bytesUp, record?.bytesDown]).toEqual([upstream?.bytesIn, upstream?.bytesOut]);
    });
    expect(t.proxy.stats()).toEqual({ openConnections: 0, bufferedBytes: 0 });
  });

  it('keeps its buffers and the process RSS bounded while 300 MB go up to a slow upstream and 300 MB down to a slow client', async () => {
    const up = auth('upload');
    const down = auth('download');
    const rssBefore = process.memoryUsage().rss;
    const sampler = new Sampler(t);
    try {
      const upload = (async (): Promise<string> => {
        const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: 'http://upload.test/', agent: false, headers: { host: 'upload.test', 'proxy-authorization': up, 'content-length': String(BODY) } });
        const response = once(req, 'response') as Promise<[IncomingMessage]>;
        await pipeline(generated(BODY), req);
        const [res] = await response;
        let text = '';
        for await (const chunk of res) text += (chunk as Buffer).toString('utf8');
        return text;
      })();
      const download = (async (): Promise<number> => {
        const tunnel = await connectThrough(t.port, 'download.test:9000', down);
        expect(tunnel.status).toBe(200);
        tunnel.socket.write(`GET ${String(BODY)}\n`);
        const n = await readSlowly(tunnel.socket);
        tunnel.socket.end();
        return n;
      })();
      const [uploadReply, downloaded] = await Promise.all([upload, download]);
      expect(uploadReply).toBe(String(BODY));
      expect(downloaded).toBe(BODY);
    } finally {
      sampler.stop();
    }
    const [upRecord] = await recordsOf((s) => s === 'upload', 1);
    const [downRecord] = await recordsOf((s) => s === 'download', 1);
    // The upload: every byte the upstream's socket read (request head + 300 MB body) and wrote.
    await until(uploadEvents, 'uploaded', () => uploaded.length > 0);
    const [seen] = uploaded;
    expect(seen?.body).toBe(BODY);
    expect(upRecord).toMatchObject({ method: 'POST', host: 'upload.test', status: 200, bytesUp: seen?.socketIn, bytesDown: seen?.socketOut });
    expect(upRecord?.bytesUp).toBeGreaterThan(BODY);
    expect(downRecord).toMatchObject({ method: 'CONNECT', host: 'download.test', status: 200, bytesUp: `GET ${String(BODY)}\n`.length, bytesDown: BODY });
    expect([upRecord?.reason, downRecord?.reason]).toEqual([undefined, undefined]);
    // Bounded: never more than PER_CONNECTION_BOUND per open connection, and RSS far below the bodies.
    const rssGrowth = sampler.maxRss - rssBefore;
    console.log(`egress load: ${String(sampler.samples)} samples, max bufferedBytes ${String(sampler.maxBuffered)} over ${String(sampler.maxOpen)} connections (bound ${String(PER_CONNECTION_BOUND)} each), RSS growth ${String(Math.round(rssGrowth / MiB))} MiB`);
    expect(sampler.samples).toBeGreaterThan(0);
    expect(sampler.maxOpen).toBeLessThanOrEqual(2);
    expect(sampler.overBound).toBe(0);
    expect(sampler.maxBuffered).toBeLessThanOrEqual(2 * PER_CONNECTION_BOUND);
    expect(rssGrowth).toBeLessThan(RSS_GROWTH_BOUND);
  });

  it('closes a revoked session’s tunnels mid-transfer while the other sessions’ transfers go on', async () => {
    const revoked = auth('rev-a');
    const bystanderB = auth('rev-b');
    const bystanderC = auth('rev-c');
    // rev-a: an endless download (only the revocation can end it) and an open echo tunnel.
    const endless = await connectThrough(t.port, 'download.test:9000', revoked);
    const echoA = await connectThrough(t.port, 'echo.test:7000', revoked);
    // rev-b: a 64 MiB download that stops reading after 1 MiB until the revocation is done.
    const partial = await connectThrough(t.port, 'download.test:9000', bystanderB);
    // rev-c: an echo tunnel used before and after.
    const echoC = await connectThrough(t.port, 'echo.test:7000', bystanderC);
    expect([endless, echoA, partial, echoC].map((tunnel) => tunnel.status)).toEqual([200, 200, 200, 200]);
    const closedA = [endless.socket, echoA.socket].map((s) => {
      s.on('error', ignore);
      s.resume(); // reads to the end the proxy makes
      return once(s, 'close');
    });
    let endlessBytes = 0;
    const flowing = new Promise<void>((resolve) =>
      endless.socket.on('data', (chunk: Buffer) => {
        endlessBytes += chunk.length;
        if (endlessBytes >= 4 * MiB) resolve();
      }),
    );
    endless.socket.write('GET forever\n');
    const bHeld = deferred();
    const bRelease = deferred();
    const bDone = readSlowly(partial.socket, { at: MiB, reached: bHeld.resolve, release: bRelease.promise });
    partial.socket.write(`GET ${String(64 * MiB)}\n`);
    echoA.socket.write('rev-a\n');
    echoC.socket.write('rev-c\nbefore');
    const before = readText(echoC.socket, 'rev-c\nbefore'.length);
    await Promise.all([flowing, bHeld.promise, before]);

    expect(t.sessions.revoke('rev-a')).toBe(2);
    await Promise.all(closedA);
    const recordsA = await recordsOf((s) => s === 'rev-a', 2);
    expect(recordsA.map((r) => r.reason)).toEqual(['revoked', 'revoked']);
    expect((await connectThrough(t.port, 'download.test:9000', revoked)).status).toBe(407);

    // The bystanders were mid-transfer and go on to their ends.
    bRelease.resolve();
    const after = readText(echoC.socket, 'after'.length);
    echoC.socket.write('after');
    expect(await after).toBe('after');
    expect(await bDone).toBe(64 * MiB);
    partial.socket.end();
    echoC.socket.end();
    const [recordB] = await recordsOf((s) => s === 'rev-b', 1);
    const [recordC] = await recordsOf((s) => s === 'rev-c', 1);
    expect(recordB).toMatchObject({ status: 200, bytesDown: 64 * MiB });
    expect(recordC).toMatchObject({ status: 200, bytesUp: 'rev-c\nbeforeafter'.length, bytesDown: 'rev-c\nbeforeafter'.length });
    expect([recordB?.reason, recordC?.reason]).toEqual([undefined, undefined]);
  });
});
