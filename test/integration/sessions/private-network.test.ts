/**
 * A local session under a network policy (issue 23): a real bubblewrap sandbox without a network of
 * its own. From inside, a host-side server on 127.0.0.1 and any outside address are unreachable,
 * while http://127.0.0.1:3128 (the agent's HTTPS_PROXY) reaches a stand-in of the egress proxy
 * listening on a Unix socket on the host. The session works end to end without a shared network:
 * the demo agent's output, a reconnect by a restarted controller (a new executor), stop and resume.
 * @module
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { existsSync, lstatSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreateInstanceRequest, ExecutorInstance } from '../../../src/executors/executor.js';
import { LaunchError } from '../../../src/executors/launch-kit/index.js';
import { LocalExecutor, probeBubblewrap } from '../../../src/executors/local/index.js';
import { encodeNetworkSettings, LOCAL_EGRESS_PORT, NETWORK_SETTING, type NetworkSettings } from '../../../src/executors/network.js';
import { agentctlBundle, agentctlPids, cleanup, killLeftovers, makeRepo, tempDir } from './helpers.js';

const ALLOWLIST: NetworkSettings = { egress: 'allowlist', allow: ['example.com'], allowClusterApi: false, allowMetadata: false, brokers: {} };

/** Runs `argv` in the instance; its stdout and exit code. */
async function run(inst: ExecutorInstance, argv: string[]): Promise<{ exitCode: number | null; stdout: string }> {
  const proc = await inst.client.startProcess({ command: argv });
  let stdout = '';
  let exitCode: number | null = null;
  for await (const msg of inst.client.streamOutput(proc.id)) {
    if (msg.type === 'output' && msg.chunk.stream === 'stdout') stdout += Buffer.from(msg.chunk.data, 'base64').toString();
    if (msg.type === 'exit') exitCode = msg.exit_code;
  }
  return { exitCode, stdout };
}

/** A Node script run inside the sandbox (node is bound read-only there). */
const node = (script: string): string[] => [process.execPath, '-e', script];

/** Connects to host:port over TCP; prints `connected` or the error code. */
const tcpProbe = (host: string, port: number): string[] =>
  node(`const s=require('net').connect(${port},'${host}');s.on('connect',()=>{console.log('connected');s.destroy()});s.on('error',e=>console.log(e.code))`);

/** A proxy request for http://example.com/hello through HTTP_PROXY; prints the status and body. */
const proxyGet = node(
  `const u=new URL(process.env.HTTP_PROXY);require('http').get({host:u.hostname,port:u.port,path:'http://example.com/hello',headers:{host:'example.com','proxy-authorization':'Basic '+Buffer.from(decodeURIComponent(u.username)+':'+decodeURIComponent(u.password)).toString('base64')}},r=>{let b='';r.on('data',d=>b+=d);r.on('end',()=>console.log(r.statusCode,b))}).on('error',e=>console.log('error',e.code))`,
);

describe('a local session under a network policy (no network of its own)', () => {
  let work: string;
  let dataDir: string;
  let agentctlPath: string;
  let repo: string;
  let egressSocket: string;
  let standIn: HttpServer;
  let hostServer: Server;
  let hostPort: number;
  const seen: string[] = [];

  beforeAll(async () => {
    expect(probeBubblewrap(), 'bubblewrap must work on the test machine (test/cluster/install-deps.sh installs it)').toMatchObject({ ok: true });
    work = tempDir('private-net');
    dataDir = join(work, 'data');
    agentctlPath = agentctlBundle(work);
    repo = makeRepo(work, 'repo', 'private-net');
    egressSocket = join(work, 'run', 'egress.sock');
    mkdirSync(join(work, 'run'));
    standIn = await startStandIn('stand-in');
    hostServer = createServer((s) => s.end('host server\n'));
    await new Promise<void>((resolve) => hostServer.listen(0, '127.0.0.1', resolve));
    hostPort = (hostServer.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise((r) => standIn.close(r));
    await new Promise((r) => hostServer.close(r));
    const leaked = killLeftovers(dataDir);
    cleanup(work);
    expect(leaked).toBe(0);
  });

  /** The egress proxy's stand-in: an HTTP server on the Unix socket, answering every proxy request itself. */
  async function startStandIn(name: string): Promise<HttpServer> {
    const server = createHttpServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers['proxy-authorization'] ?? ''}`);
      res.end(`${name} saw ${req.url}`);
    });
    await new Promise<void>((resolve) => server.listen(egressSocket, resolve));
    return server;
  }

  const executor = (opts: { egressSocket?: string | null; sandbox?: 'bubblewrap' | 'none' } = {}) =>
    new LocalExecutor({ dataDir, agentctlPath, sandbox: opts.sandbox ?? 'bubblewrap', egressSocket: opts.egressSocket === undefined ? egressSocket : opts.egressSocket });

  function request(sessionId: string, network: NetworkSettings = ALLOWLIST): CreateInstanceRequest {
    const proxy = `http://${sessionId}:proxy-secret@127.0.0.1:${LOCAL_EGRESS_PORT}`;
    return {
      identity: { instanceId: `${sessionId}-i1`, sessionId, taskId: sessionId, environmentId: sessionId },
      repository: { path: repo },
      env: { HTTP_PROXY: proxy, HTTPS_PROXY: proxy, BERTH_DEMO_STEP_MS: '0' },
      secretEnv: {},
      profile: { executor: 'local', profile: 'locked', type: 'local', settings: { [NETWORK_SETTING]: encodeNetworkSettings(network) }, env: {} },
      onStage: () => undefined,
      checkpointRuntimeInventory: async () => undefined,
      releaseRuntimeInventory: async () => undefined,
    };
  }

  it('reaches neither the host loopback nor the outside, only the egress proxy through its socket; and works across restart, stop and resume', async () => {
    const exec = executor();
    const req = request('s-locked');
    const inst = await exec.createInstance(req);
    const target = () => ({ identity: inst.identity, metadata: inst.metadata });
    expect(inst.metadata['local_private_network']).toBe('true');
    expect(inst.metadata['local_agentctl_control_port'], 'no loopback port of the sandbox is recorded').toBeUndefined();
    const socketPath = join(dataDir, 'workspaces', 's-locked', 'agentctl.sock');
    expect(lstatSync(socketPath).isSocket()).toBe(true);
    expect(statSync(socketPath).mode & 0o777).toBe(0o600);
    expect(await exec.status(target())).toMatchObject({ liveness: 'running' });

    // a direct connection to a server on the host's loopback, or anywhere outside, fails
    expect((await run(inst, tcpProbe('127.0.0.1', hostPort))).stdout.trim()).toBe('ECONNREFUSED');
    expect((await run(inst, tcpProbe('192.0.2.1', 80))).stdout.trim()).toBe('ENETUNREACH');
    // the proxy on the sandbox's loopback reaches the stand-in on the host's socket, credential and all
    expect((await run(inst, proxyGet)).stdout.trim()).toBe('200 stand-in saw http://example.com/hello');
    expect(seen.at(-1)).toBe(`GET http://example.com/hello Basic ${Buffer.from('s-locked:proxy-secret').toString('base64')}`);
    // berth serve restarted: its proxy binds a new socket at the same path, and the running sandbox reaches it
    await new Promise((r) => standIn.close(r));
    standIn = await startStandIn('restarted stand-in');
    expect((await run(inst, proxyGet)).stdout.trim()).toBe('200 restarted stand-in saw http://example.com/hello');
    // the sandbox sees neither the control socket nor the session dir it lies in
    expect((await run(inst, ['sh', '-c', `test -e '${socketPath}' && echo visible || echo hidden`])).stdout.trim()).toBe('hidden');

    // the agent: its output comes back through the socket
    const demo = await run(inst, ['sh', '-c', `'${process.execPath}' '${agentctlPath}' demo-agent </dev/null`]);
    expect(demo.stdout).toContain('NOTES.md');

    // a restarted controller (a new executor) reconnects to the running agentctl through the socket
    const pids = agentctlPids(dataDir);
    const reconnected = await executor().createInstance({ ...req, previous: { metadata: inst.metadata, secrets: inst.secrets } });
    expect(reconnected.revived).toBe(false);
    expect(agentctlPids(dataDir)).toEqual(pids);
    expect((await run(reconnected, ['sh', '-c', 'echo still here'])).stdout).toBe('still here\n');
    await inst.close();
    await expect(fetch(`${inst.client.baseUrl}/health`), "the instance's relay closes with it").rejects.toThrow();
    await reconnected.close();

    // stop, resume: a new agentctl without a network, the proxy still reachable
    await exec.stopInstance(target(), { destroy: false, reason: 'test' });
    expect((await exec.status(target())).liveness).toBe('stopped');
    const resumed = await exec.createInstance({ ...req, previous: { metadata: inst.metadata, secrets: inst.secrets } });
    expect(resumed.revived).toBe(true);
    expect((await run(resumed, tcpProbe('127.0.0.1', hostPort))).stdout.trim()).toBe('ECONNREFUSED');
    expect((await run(resumed, proxyGet)).stdout.trim()).toBe('200 restarted stand-in saw http://example.com/hello');
    await resumed.close();
    await exec.stopInstance({ identity: resumed.identity, metadata: resumed.metadata }, { destroy: true, reason: 'test' });
    expect(existsSync(join(dataDir, 'workspaces', 's-locked'))).toBe(false);
  }, 90_000);

  it('gives a policy without the proxy (deny) no network at all, and no relay', async () => {
    const exec = executor();
    const inst = await exec.createInstance(request('s-deny', { ...ALLOWLIST, egress: 'deny', allow: [] }));
    expect((await run(inst, tcpProbe('127.0.0.1', LOCAL_EGRESS_PORT))).stdout.trim()).toBe('ECONNREFUSED');
    expect((await run(inst, tcpProbe('127.0.0.1', hostPort))).stdout.trim()).toBe('ECONNREFUSED');
    await inst.close();
    await exec.stopInstance({ identity: inst.identity, metadata: inst.metadata }, { destroy: true, reason: 'test' });
  }, 60_000);

  it('refuses a policy that needs the proxy when the proxy is not running, and one without the sandbox', async () => {
    const missing = await executor({ egressSocket: join(work, 'no-such.sock') })
      .createInstance(request('s-noproxy'))
      .then(() => null, (e: unknown) => e);
    expect(missing).toBeInstanceOf(LaunchError);
    expect(missing).toMatchObject({ stage: 'agentctl_start', reason: 'EgressProxyUnavailable' });
    expect((missing as Error).message).toContain('the egress proxy of berth serve is not running');
    expect(existsSync(join(dataDir, 'workspaces', 's-noproxy')), 'rolled back').toBe(false);

    const unsandboxed = await executor({ sandbox: 'none' })
      .createInstance(request('s-nosandbox'))
      .then(() => null, (e: unknown) => e);
    expect(unsandboxed).toMatchObject({ stage: 'agentctl_start', reason: 'SandboxRequired' });
    expect((unsandboxed as Error).message).toContain('network policy, which needs the bubblewrap sandbox');
    expect(agentctlPids(dataDir)).toEqual([]);
  }, 60_000);
});
