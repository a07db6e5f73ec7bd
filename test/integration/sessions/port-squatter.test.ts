/**
 * The local controller talks only to the agentctl it started (issue 18, item 7). A local process
 * that binds a loopback port before agentctl does must receive nothing from a launch: not the
 * /health probe, not the nonce, not the secret environment.
 *
 * The squatter here is as quick as a squatter can be: every loopback port this process picks with
 * `listen(0)` and releases again (the old way of choosing agentctl's ports) is bound by the
 * squatter before the release completes. A controller that hands agentctl a port it picked itself
 * therefore always loses that port to the squatter; one that learns the port from agentctl's own
 * report never does. A reconnect after a controller restart sends the token only when the socket
 * on the recorded port belongs to the recorded agentctl.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type * as Net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CreateInstanceRequest } from '../../../src/executors/executor.js';
import { LocalExecutor } from '../../../src/executors/local/index.js';
import { agentctlBundle, cleanup, killLeftovers, makeRepo, tempDir } from './helpers.js';

interface Received {
  port: number;
  method: string;
  url: string;
  authorization: string | null;
  body: string;
}

const squat = vi.hoisted(() => ({
  /** Binds a squatter on `port` (set by the test once its servers can be made). */
  bind: null as ((port: number) => Promise<void>) | null,
  ports: [] as number[],
}));

vi.mock('node:net', async (importOriginal) => {
  const net = await importOriginal<typeof Net>();
  const createServer = ((...args: Parameters<typeof Net.createServer>) => {
    const server = net.createServer(...args);
    let picked = false;
    const listen = server.listen.bind(server) as (...a: unknown[]) => Net.Server;
    server.listen = ((...a: unknown[]) => {
      picked = a[0] === 0 || (typeof a[0] === 'object' && a[0] !== null && (a[0] as { port?: unknown }).port === 0);
      return listen(...a);
    }) as Net.Server['listen'];
    const close = server.close.bind(server);
    server.close = ((cb?: (err?: Error) => void) => {
      const addr = server.address();
      return close((err) => {
        if (!picked || squat.bind === null || typeof addr !== 'object' || addr === null || addr.address !== '127.0.0.1') {
          cb?.(err);
          return;
        }
        squat.ports.push(addr.port);
        squat.bind(addr.port).then(
          () => cb?.(err),
          () => cb?.(err),
        );
      });
    }) as Net.Server['close'];
    return server;
  }) as typeof Net.createServer;
  return { ...net, createServer, default: { ...net, createServer } };
});

describe('local launches and a port squatter', () => {
  let work: string;
  let dataDir: string;
  let repo: string;
  let agentctl: string;
  const received: Received[] = [];
  const squatters: HttpServer[] = [];

  /** A plain HTTP server on `port` (0: any) that answers every request as an agentctl would and records it. */
  function squatter(port: number): Promise<number> {
    const server = createHttpServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        received.push({ port, method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization ?? null, body });
        res.setHeader('content-type', 'application/json');
        if (req.url === '/health') res.end(JSON.stringify({ status: 'ok', version: '0.0.0' }));
        else if (req.url === '/auth/handshake') res.end(JSON.stringify({ token: 'squatter-token-'.padEnd(48, 'x') }));
        else res.end('{}');
      });
    });
    squatters.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
  }

  beforeAll(() => {
    work = tempDir('squatter');
    dataDir = join(work, 'data');
    repo = makeRepo(work, 'repo', 'squatter');
    agentctl = agentctlBundle(work);
    squat.bind = async (port) => {
      await squatter(port);
    };
  });

  afterAll(async () => {
    squat.bind = null;
    await Promise.all(squatters.map((s) => new Promise((r) => s.close(r))));
    const leaked = killLeftovers(dataDir);
    cleanup(work);
    expect(leaked).toBe(0);
  });

  function request(sessionId: string, secret: string): CreateInstanceRequest {
    return {
      identity: { instanceId: `${sessionId}-i1`, sessionId, taskId: sessionId, environmentId: sessionId },
      repository: { path: repo },
      env: {},
      secretEnv: { API_KEY: secret },
      profile: { executor: 'local', profile: null, type: 'local', settings: {}, env: {} },
      onStage: () => undefined,
      checkpointRuntimeInventory: () => Promise.resolve(),
    };
  }

  it.each([['none'], ['bubblewrap']] as const)('with sandbox %s, the squatter receives no request and the sessions work', async (sandbox) => {
    const exec = new LocalExecutor({ dataDir, agentctlPath: agentctl, sandbox });
    const secrets: string[] = [];
    const outputs: string[] = [];
    const failures: string[] = [];
    for (let i = 0; i < 3; i++) {
      const secret = `secret-${randomBytes(12).toString('hex')}`;
      secrets.push(secret);
      try {
        const inst = await exec.createInstance(request(`s-${sandbox}-${i}`, secret));
        const proc = await inst.client.startProcess({ command: ['sh', '-c', 'printf %s "$API_KEY"'] });
        let out = '';
        for await (const msg of inst.client.streamOutput(proc.id)) {
          if (msg.type === 'output') out += Buffer.from(msg.chunk.data, 'base64').toString();
        }
        outputs.push(out);
        await exec.stopInstance({ identity: inst.identity, metadata: inst.metadata }, { destroy: true, reason: 'test' });
      } catch (err) {
        failures.push(String(err));
      }
    }
    const leaked = received.filter((r) => secrets.some((s) => r.body.includes(s)) || r.body.includes('nonce'));
    expect(leaked, 'the squatter received the nonce or a secret').toEqual([]);
    expect(received, `the squatter on ${squat.ports.join(', ') || 'no port'} got requests`).toEqual([]);
    expect(failures).toEqual([]);
    expect(outputs, 'the approved secret reaches each agent').toEqual(secrets);
  });

  it('with network: false (a loopback of its own in the sandbox) the launch fails saying so, and sends nothing to the host loopback', async () => {
    const exec = new LocalExecutor({ dataDir, agentctlPath: agentctl, sandbox: 'bubblewrap', network: false });
    received.length = 0;
    const err = await exec.createInstance(request('s-no-net', `secret-${randomBytes(12).toString('hex')}`)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(received, 'the squatter got requests').toEqual([]);
    expect(err).toMatchObject({ stage: 'agentctl_start', message: expect.stringContaining('network: false gives the sandbox a loopback of its own') });
  });

  it('a reconnect sends the token only to the socket of the recorded agentctl, never to another listener on its port', async () => {
    const exec = new LocalExecutor({ dataDir, agentctlPath: agentctl, sandbox: 'none' });
    const secret = `secret-${randomBytes(12).toString('hex')}`;
    const req = request('s-reconnect', secret);
    const inst = await exec.createInstance(req);
    // the recorded agentctl is alive and ours, but what answers on the recorded port is not it
    // (as while agentctl shuts down, its port released, and another process binds it)
    const port = await squatter(0);
    received.length = 0;
    const metadata = { ...inst.metadata, local_agentctl_control_port: String(port) };
    const revived = await exec.createInstance({ ...req, previous: { metadata, secrets: inst.secrets } });
    expect(received, 'the squatter got requests').toEqual([]);
    const proc = await revived.client.startProcess({ command: ['sh', '-c', 'printf %s "$API_KEY"'] });
    let out = '';
    for await (const msg of revived.client.streamOutput(proc.id)) if (msg.type === 'output') out += Buffer.from(msg.chunk.data, 'base64').toString();
    expect(out).toBe(secret);
    await exec.stopInstance({ identity: revived.identity, metadata: revived.metadata }, { destroy: true, reason: 'test' });
  });
});
