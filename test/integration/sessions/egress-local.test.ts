/**
 * Egress policy for a local session, end to end through the controller (issue 23): a profile with
 * `network: allowlist` gets a sandbox with no network of its own; its agent reaches Berth's egress
 * proxy (run by the controller on a Unix socket) through agentctl's relay on the sandbox's loopback,
 * with its own token; an allowed host answers, a denied one gets 403, a direct connection goes
 * nowhere; every connection is recorded for `berth egress`; the token stops working with `stop`.
 */
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findInstallRoot, resolveConfig } from '../../../src/config/index.js';
import { createController, type Controller } from '../../../src/controller/index.js';
import { egressSocketPath } from '../../../src/executors/network.js';
import { probeBubblewrap } from '../../../src/executors/local/index.js';
import { agentctlBundle, execText, makeRepo, ROOT, teardownController, tempDir, until } from './helpers.js';

/** This machine's first non-loopback IPv4 address (the proxy refuses loopback destinations). */
function hostAddress(): string {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  throw new Error('the egress test needs a non-loopback IPv4 address on this machine');
}

/** In the sandbox: a GET of an absolute URL through $HTTP_PROXY; prints `STATUS BODY` or `ERR CODE`. */
const PROXY_GET = `const u=new URL(process.env.HTTP_PROXY);const a='Basic '+Buffer.from(decodeURIComponent(u.username)+':'+decodeURIComponent(u.password)).toString('base64');
require('http').get({host:u.hostname,port:u.port,path:process.argv[1],headers:{'Proxy-Authorization':a}},r=>{let b='';r.on('data',d=>b+=d);r.on('end',()=>console.log(r.statusCode+' '+b.trim()))}).on('error',e=>console.log('ERR '+e.code))`;
const DIRECT = `const s=require('net').connect({host:process.argv[1],port:+process.argv[2]});s.setTimeout(3000);s.on('connect',()=>{console.log('CONNECTED');s.destroy()});s.on('timeout',()=>{console.log('TIMEOUT');s.destroy()});s.on('error',e=>console.log('ERR '+e.code))`;

describe('egress policy of a local session', () => {
  let work: string;
  let dataDir: string;
  let c: Controller | undefined;
  let allowed: Server;
  let denied: Server;
  const ip = hostAddress();
  let allowedPort = 0;
  let deniedPort = 0;

  beforeAll(async () => {
    expect(probeBubblewrap(), 'bubblewrap must work on the test machine').toMatchObject({ ok: true });
    allowed = createServer((_req, res) => res.end('hello from allowed\n'));
    denied = createServer((_req, res) => res.end('hello from denied\n'));
    await new Promise<void>((resolve) => allowed.listen(0, ip, () => resolve()));
    await new Promise<void>((resolve) => denied.listen(0, ip, () => resolve()));
    allowedPort = (allowed.address() as { port: number }).port;
    deniedPort = (denied.address() as { port: number }).port;
    work = tempDir('egress-local');
    dataDir = join(work, 'data');
    const config = resolveConfig(
      {
        executors: { local: { type: 'local', sandbox: 'bubblewrap' } },
        profiles: { fenced: { executor: 'local', network: { egress: 'allowlist', allow: ['allowed.test'] } } },
        agents: { sleeper: { command: ['sh', '-c', 'echo agent started; exec sleep 600'] } },
        egress: { hosts: { 'allowed.test': ip, 'denied.test': ip } },
      },
      { source: null, installRoot: findInstallRoot(join(ROOT, 'src', 'config')) },
    );
    c = await createController({ dataDir, agentctlPath: agentctlBundle(work), config, env: { ...process.env } });
    await c.recover();
  }, 60_000);

  afterAll(async () => {
    allowed?.close();
    denied?.close();
    await teardownController(c, dataDir, work);
  });

  it('reaches only its allowed host, through the proxy; records it; the token dies with the stop', async () => {
    const s = await c!.launch({ repository: { path: makeRepo(work, 'repo', 'egress-local') }, agent: 'sleeper', executor: 'fenced' });
    expect((await c!.waitUntilSettled(s.id)).state).toBe('ready');
    const node = async (script: string, ...args: string[]) => (await execText(c!, s.id, ['node', '-e', script, ...args])).stdout.trim();

    expect(await node(PROXY_GET, `http://allowed.test:${allowedPort}/`)).toBe('200 hello from allowed');
    expect(await node(PROXY_GET, `http://denied.test:${deniedPort}/`)).toMatch(/^403 /);
    expect(await node(DIRECT, ip, String(allowedPort)), 'no network of its own').toMatch(/^ERR /);

    // records are written in batches, within about a second
    const page = await until(async () => {
      const p = await c!.egress(s.id);
      return p.records.length >= 2 ? p : undefined;
    }, 'two connections recorded');
    expect(page.records.map((r) => [r.host, r.allowed])).toEqual([
      ['allowed.test', true],
      ['denied.test', false],
    ]);
    expect(page.summary).toMatchObject({ connections: 2, denied: 1 });

    const proxyUrl = new URL(await node('console.log(process.env.HTTP_PROXY)'));
    await c!.stop(s.id);
    // the same credential, straight at the proxy's socket from outside: refused
    const status = await new Promise<number>((resolve, reject) => {
      const sock = connect(egressSocketPath(dataDir), () => {
        const auth = Buffer.from(`${decodeURIComponent(proxyUrl.username)}:${decodeURIComponent(proxyUrl.password)}`).toString('base64');
        sock.write(`GET http://allowed.test:${allowedPort}/ HTTP/1.1\r\nHost: allowed.test\r\nProxy-Authorization: Basic ${auth}\r\nConnection: close\r\n\r\n`);
      });
      let text = '';
      sock.on('data', (d: Buffer) => (text += d.toString()));
      sock.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0)));
      sock.on('error', reject);
    });
    expect(status).toBe(407);
  }, 90_000);
});
