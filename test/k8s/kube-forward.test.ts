import { once } from 'node:events';
// openForward against the real test cluster, as the executor's ServiceAccount: one local listener,
// one port-forward WebSocket per TCP connection, failures confined to their connection.
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPod, KubeForwardError, openForward } from '../../src/executors/kubernetes/kube/index.js';
import type { PortForwardSession } from '../../src/executors/kubernetes/kube/index.js';
import { clusterEnv, restrictedPod, waitFor, waitForPodRunning } from './support/index.js';
import { executorFixture } from './support/executor-client.js';
import type { ExecutorFixture } from './support/executor-client.js';

const env = clusterEnv();
const POD = 'forward-target';
const PORT = 8080;
// `/slow` streams 40 lines 50 ms apart; `/die` sends one line, then resets its own socket.
const SERVER = `require('http').createServer((q, s) => {
  if (q.url === '/slow') { let i = 0; const t = setInterval(() => { s.write('line ' + i + '\\n'); if (++i === 40) { clearInterval(t); s.end(); } }, 50); q.on('close', () => clearInterval(t)); return; }
  if (q.url === '/die') { s.write('bye\\n'); setTimeout(() => q.socket.destroy(), 100); return; }
  s.end('hello ' + q.url);
}).listen(${PORT}, '127.0.0.1')`;

interface Reply {
  status: number;
  body: string;
}

function get(port: number, path: string, onSocket?: (socket: Socket) => void, onData?: (text: string) => void): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, timeout: 20_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        onData?.(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error(`GET ${path}: response aborted after ${JSON.stringify(body)}`)));
    });
    req.on('socket', (s) => onSocket?.(s));
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the request to fail');
}

describe('openForward', () => {
  let fx: ExecutorFixture;
  let forward: PortForwardSession;
  const errors: KubeForwardError[] = [];

  beforeAll(async () => {
    fx = await executorFixture('kube-forward');
    await createPod(fx.client, fx.ns.name, restrictedPod({ name: POD, containerName: 'agent', image: env.agentImage, command: ['node', '-e', SERVER] }));
    await waitForPodRunning(fx.admin, fx.ns.name, POD);
    forward = await openForward(fx.client, { namespace: fx.ns.name, pod: POD, port: PORT }, { onConnectionError: (e) => errors.push(e) });
    // As the executor polls agentctl: retry through the same listener until the server answers.
    await waitFor('the HTTP server in the Pod', async () => ((await get(forward.localPort, '/ready')).status === 200 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    errors.length = 0;
  });

  afterAll(async () => {
    await forward?.close();
    await fx?.cleanup();
  });

  it('listens on 127.0.0.1 and carries an HTTP round trip', async () => {
    expect(forward.localAddress).toBe('127.0.0.1');
    expect(await get(forward.localPort, '/ping')).toEqual({ status: 200, body: 'hello /ping' });
  });

  it('keeps an idle connection open across keep-alive pings: the API server answers them', async () => {
    const pinged = await openForward(fx.client, { namespace: fx.ns.name, pod: POD, port: PORT }, { pingIntervalMs: 100 });
    try {
      const socket = connect(pinged.localPort, '127.0.0.1');
      await once(socket, 'connect');
      let reply = '';
      socket.on('data', (d: Buffer) => (reply += d.toString('utf8')));
      // idle for many ping intervals before the first byte
      await new Promise((r) => setTimeout(r, 2000));
      socket.write('GET /idle HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await once(socket, 'close');
      expect(reply).toMatch(/^HTTP\/1\.1 200/);
      expect(reply).toContain('hello /idle');
      expect(pinged.stats().failures).toBe(0);
    } finally {
      await pinged.close();
    }
  });

  it('carries several concurrent connections, each on its own stream', async () => {
    const before = forward.stats().accepted;
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => get(forward.localPort, `/c${i}`)));
    expect(replies).toEqual(Array.from({ length: 6 }, (_, i) => ({ status: 200, body: `hello /c${i}` })));
    expect(forward.stats().accepted - before).toBe(6);
    expect(errors).toEqual([]);
  });

  it('keeps the other connections working when one is killed mid-stream (locally or in the Pod)', async () => {
    let victim: Socket | undefined;
    const killedLocally = get(
      forward.localPort,
      '/slow',
      (s) => (victim = s),
      () => victim?.destroy(),
    );
    const killedInPod = get(forward.localPort, '/die');
    const survivor = get(forward.localPort, '/slow');
    expect((await rejection(killedLocally)).message).toMatch(/aborted|socket hang up|ECONNRESET/);
    await killedInPod.then(
      (r) => expect(r.body).toBe('bye\n'),
      (err: Error) => expect(err.message).toMatch(/aborted|socket hang up|ECONNRESET/),
    );
    const reply = await survivor;
    expect(reply.status).toBe(200);
    expect(reply.body.split('\n').filter(Boolean)).toHaveLength(40);
    expect(await get(forward.localPort, '/after')).toEqual({ status: 200, body: 'hello /after' });
  });

  it('fails only the connection to a port nothing listens on, and keeps listening', async () => {
    const dead: KubeForwardError[] = [];
    const closed = await openForward(fx.client, { namespace: fx.ns.name, pod: POD, port: 9999 }, { onConnectionError: (e) => dead.push(e) });
    try {
      for (let i = 1; i <= 2; i++) {
        const err = await rejection(get(closed.localPort, '/'));
        expect(err.message).toMatch(/socket hang up|ECONNRESET/);
        await waitFor('the failure to be reported', () => (dead.length === i ? true : undefined), { timeoutMs: 10_000, intervalMs: 20 });
      }
      expect(closed.stats()).toMatchObject({ accepted: 2, failures: 2 });
      expect(dead[0]).toBeInstanceOf(KubeForwardError);
      expect(dead[0]?.message).toMatch(/^kubernetes port forward failed: .*9999/);
      // The healthy forward is untouched.
      expect(await get(forward.localPort, '/still')).toEqual({ status: 200, body: 'hello /still' });
    } finally {
      await closed.close();
    }
  });

  it('close() ends live connections, stops listening and is idempotent', async () => {
    const session = await openForward(fx.client, { namespace: fx.ns.name, pod: POD, port: PORT });
    const live = get(session.localPort, '/slow').then(
      () => 'completed',
      (err: Error) => err.message,
    );
    await waitFor('a live connection', () => (session.stats().active === 1 ? true : undefined), { timeoutMs: 10_000, intervalMs: 20 });
    await Promise.all([session.close(), session.close()]);
    await session.close();
    expect(session.stats().active).toBe(0);
    expect(await live).toMatch(/aborted|socket hang up|ECONNRESET/);
    const refused = await new Promise<string>((resolve) => {
      const s = connect({ host: '127.0.0.1', port: session.localPort });
      s.on('connect', () => resolve('connected'));
      s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    expect(refused).toBe('ECONNREFUSED');
  });
});
