/**
 * The egress proxy's cost next to a direct connection (issue 23): latency p50/p95 of small plain-HTTP
 * requests (a fresh connection each, both ways) and of CONNECT + TLS handshakes, and the throughput of
 * a BENCH_MB (default 200) MB transfer through a CONNECT tunnel and as a plain-HTTP POST body, each
 * next to the same thing direct. Proxy, clients and servers share this process (one event loop) on
 * 127.0.0.1, so the figures are the proxy's added work, not network time. BENCH_RUNS (default 300)
 * requests per latency figure, interleaved. Measures only: nothing here judges a time.
 * Run: node scripts/run-ts.mjs bench/egress-proxy.bench.ts
 * @module
 */
import { once } from 'node:events';
import { createServer, request, type IncomingMessage } from 'node:http';
import { connect as netConnect, createServer as createNetServer, type Socket } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { connect as tlsConnect, createServer as createTlsServer } from 'node:tls';
import { connectThrough, listen, selfSignedCert, startProxy } from '../test/integration/egress/support.js';
import { pct, round } from './k8s/stats.js';

const RUNS = positiveInt(process.env.BENCH_RUNS, 300);
const MB = 1024 * 1024;
const SIZE = positiveInt(process.env.BENCH_MB, 200) * MB;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

function positiveInt(raw: string | undefined, fallback: number): number {
  const n = Number.parseInt(raw ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function get(port: number, path: string, headers: Record<string, string>): Promise<void> {
  const req = request({ host: '127.0.0.1', port, path, agent: false, headers });
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  res.resume();
  await once(res, 'end');
}

/** Writes SIZE bytes with backpressure and ends. */
async function pump(out: NodeJS.WritableStream): Promise<void> {
  for (let sent = 0; sent < SIZE; sent += CHUNK.length) if (!out.write(CHUNK)) await once(out, 'drain');
  out.end();
}

/** Sends SIZE bytes to the sink over `socket` and waits for its count. */
async function sinkTransfer(socket: Socket): Promise<void> {
  const answer = once(socket, 'data');
  await pump(socket);
  const [reply] = (await answer) as [Buffer];
  if (reply.toString() !== String(SIZE)) throw new Error(`the sink counted ${reply.toString()} bytes`);
  socket.destroy();
}

async function main(): Promise<void> {
  const cert = selfSignedCert(['bench.test']);
  const httpPort = await listen(createServer((_req, res) => res.end('ok')));
  const uploadPort = await listen(createServer((req, res) => {
    let n = 0;
    req.on('data', (c: Buffer) => (n += c.length)).on('end', () => res.end(String(n)));
  }));
  const tlsPort = await listen(createTlsServer({ key: cert.key, cert: cert.cert }, (s) => s.on('error', () => undefined).resume()));
  const sinkPort = await listen(createNetServer((s) => {
    let n = 0;
    s.on('data', (c: Buffer) => (n += c.length));
    s.on('end', () => s.end(String(n)));
    s.on('error', () => undefined);
  }));
  const proxy = await startProxy(new Map([['bench.test:80', httpPort], ['bench.test:443', tlsPort], ['bench.test:9000', sinkPort], ['upload.test:80', uploadPort]]), { connectTimeoutMs: 10_000, idleTimeoutMs: 60_000 });
  const auth = proxy.sessions.add('bench', 'bench-token', ['bench.test', 'upload.test']);
  const samples: Record<string, number[]> = { 'HTTP GET direct': [], 'HTTP GET via proxy': [], 'TLS handshake direct': [], 'CONNECT + TLS via proxy': [] };
  const handshake = async (socket: Socket | undefined): Promise<void> => {
    const tls = tlsConnect({ ...(socket === undefined ? { host: '127.0.0.1', port: tlsPort } : { socket }), servername: 'bench.test', ca: cert.cert });
    await once(tls, 'secureConnect');
    tls.destroy();
  };
  for (let i = 0; i < 20; i++) await get(httpPort, '/', {}); // warm-up
  for (let i = 0; i < RUNS; i++) {
    samples['HTTP GET direct']!.push(await timed(() => get(httpPort, '/', {})));
    samples['HTTP GET via proxy']!.push(await timed(() => get(proxy.port, 'http://bench.test/', { host: 'bench.test', 'proxy-authorization': auth })));
    samples['TLS handshake direct']!.push(await timed(() => handshake(undefined)));
    samples['CONNECT + TLS via proxy']!.push(await timed(async () => handshake((await connectThrough(proxy.port, 'bench.test:443', auth)).socket)));
  }
  const direct = await timed(async () => sinkTransfer(netConnect({ host: '127.0.0.1', port: sinkPort })));
  const tunneled = await timed(async () => sinkTransfer((await connectThrough(proxy.port, 'bench.test:9000', auth)).socket));
  const post = async (port: number, path: string, headers: Record<string, string>): Promise<void> => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, agent: false, headers });
    const response = once(req, 'response');
    await pump(req);
    const [res] = (await response) as [IncomingMessage];
    let body = '';
    for await (const c of res) body += (c as Buffer).toString();
    if (body !== String(SIZE)) throw new Error(`the upload server counted ${body} bytes`);
  };
  const postDirect = await timed(() => post(uploadPort, '/', {}));
  const postProxied = await timed(() => post(proxy.port, 'http://upload.test/', { host: 'upload.test', 'proxy-authorization': auth }));
  report(samples, { direct, tunneled, postDirect, postProxied });
  await proxy.proxy.close();
  process.exit(0);
}

function report(samples: Record<string, number[]>, tp: { direct: number; tunneled: number; postDirect: number; postProxied: number }): void {
  const mbps = (ms: number): number => round(SIZE / MB / (ms / 1000), 0);
  console.log(`egress proxy bench: node ${process.version}, ${String(cpus().length)} CPUs, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, ${String(RUNS)} runs per latency figure`);
  console.log('| figure | n | p50 ms | p95 ms |');
  console.log('|---|---|---|---|');
  for (const [figure, v] of Object.entries(samples)) console.log(`| ${figure} | ${String(v.length)} | ${String(round(pct(v, 50), 2))} | ${String(round(pct(v, 95), 2))} |`);
  const added = (a: string, b: string, p: number): number => round(pct(samples[b]!, p) - pct(samples[a]!, p), 2);
  console.log(`| added by the proxy, HTTP GET | | ${String(added('HTTP GET direct', 'HTTP GET via proxy', 50))} | ${String(added('HTTP GET direct', 'HTTP GET via proxy', 95))} |`);
  console.log(`| added by the proxy, CONNECT + TLS | | ${String(added('TLS handshake direct', 'CONNECT + TLS via proxy', 50))} | ${String(added('TLS handshake direct', 'CONNECT + TLS via proxy', 95))} |`);
  console.log(`\n| ${String(SIZE / MB)} MB transfer | direct MB/s | via proxy MB/s |`);
  console.log('|---|---|---|');
  console.log(`| raw TCP (CONNECT tunnel) | ${String(mbps(tp.direct))} | ${String(mbps(tp.tunneled))} |`);
  console.log(`| plain-HTTP POST body | ${String(mbps(tp.postDirect))} | ${String(mbps(tp.postProxied))} |`);
}

await main();
