/**
 * Egress policy on the real cluster (issue 23), with the test cluster's NetworkPolicy enforcer on:
 * a session of a profile with `network: allowlist` reaches an allowed host through Berth's egress
 * proxy (run by the controller, as `berth serve` does), and nothing else — not a denied host through
 * the proxy, and neither the allowed host, the metadata address nor the API server by a direct
 * connection (the policy, not the proxy alone). The model API is reached through the credential
 * broker: the fake API gets the real key, which is in no Pod's environment, file or spec and not in
 * the inventory. A CONNECT whose TLS SNI names another host is cut. The token stops working when
 * the session stops. The policy exists before the Pod, goes with `rm`, and one left behind (a
 * killed controller's) is swept.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkingV1Api } from '@kubernetes/client-node';
import { findInstallRoot, loadConfig } from '../../src/config/index.js';
import { createExecutors } from '../../src/controller/executor-factory.js';
import type { KubernetesExecutor } from '../../src/executors/kubernetes/index.js';
import { InventoryStore } from '../../src/inventory/index.js';
import { silentLogger } from '../../src/shared/logger.js';
import { startFakeModelApi, type FakeModelApi } from '../support/fake-model-api.js';
import { selfSignedCert } from '../integration/egress/support.js';
import { berthOnCluster, execText, ROOT, FAST_AGENT_ENV, imageTemplate, launchReady, type BerthOnCluster } from './support/berth.js';
import { clusterEnv, requireEnv } from './support/env.js';
import { waitFor } from './support/wait.js';

const env = clusterEnv();
const HOST_IP = requireEnv('BERTH_TEST_HOST_IP');
const MODEL_KEY = 'sk-ant-real-key-0123456789abcdef';

/** A free TCP port on `host` (the proxy's listen address must be known before the config is written). */
async function freePort(host: string): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((resolve) => s.listen(0, host, () => resolve()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

async function listenOn(server: Server, host: string): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  return (server.address() as { port: number }).port;
}

/** In the Pod: a GET of an absolute URL through $HTTP_PROXY; prints `STATUS BODY` or `ERR CODE`. */
const PROXY_GET = `const u=new URL(process.env.HTTP_PROXY);const a='Basic '+Buffer.from(decodeURIComponent(u.username)+':'+decodeURIComponent(u.password)).toString('base64');
require('http').get({host:u.hostname,port:u.port,path:process.argv[1],headers:{'Proxy-Authorization':a}},r=>{let b='';r.on('data',d=>b+=d);r.on('end',()=>console.log(r.statusCode+' '+b.trim()))}).on('error',e=>console.log('ERR '+e.code))`;
/** In the Pod: a direct TCP connect; prints CONNECTED, TIMEOUT or ERR CODE. */
const DIRECT = `const s=require('net').connect({host:process.argv[1],port:+process.argv[2]});s.setTimeout(3000);s.on('connect',()=>{console.log('CONNECTED');s.destroy()});s.on('timeout',()=>{console.log('TIMEOUT');s.destroy()});s.on('error',e=>console.log('ERR '+e.code))`;
/** In the Pod: CONNECT host:port through the proxy, then TLS with SNI argv[3]; prints TLS-OK or what cut it. */
const CONNECT_SNI = `const u=new URL(process.env.HTTP_PROXY);const a='Basic '+Buffer.from(decodeURIComponent(u.username)+':'+decodeURIComponent(u.password)).toString('base64');
const r=require('http').request({host:u.hostname,port:u.port,method:'CONNECT',path:process.argv[1]+':'+process.argv[2],headers:{'Proxy-Authorization':a}});
r.on('connect',(res,sock)=>{if(res.statusCode!==200){console.log('CONNECT '+res.statusCode);return}const t=require('tls').connect({socket:sock,servername:process.argv[3],rejectUnauthorized:false},()=>{console.log('TLS-OK');t.destroy()});t.on('error',e=>console.log('TLS-ERR '+e.code));t.on('close',()=>console.log('CLOSED'))});r.on('error',e=>console.log('ERR '+e.code));r.end()`;
/** In the Pod: the broker call the Anthropic SDK makes, with the session's token as the key. */
const BROKER_CALL = `fetch(process.env.ANTHROPIC_BASE_URL+'/v1/messages',{method:'POST',headers:{'x-api-key':process.env.ANTHROPIC_API_KEY,'anthropic-version':'2023-06-01','content-type':'application/json'},body:JSON.stringify({model:'m',max_tokens:8,messages:[{role:'user',content:'hi'}]})}).then(async r=>console.log(r.status+' '+await r.text())).catch(e=>console.log('ERR '+e.message))`;

describe('egress policy, proxy and broker on the cluster', () => {
  let h: BerthOnCluster;
  let allowed: Server;
  let denied: Server;
  let tlsServer: Server;
  let models: FakeModelApi;
  let allowedPort = 0;
  let deniedPort = 0;
  let tlsPort = 0;
  let proxyPort = 0;
  let certDir = '';

  beforeAll(async () => {
    allowed = createHttpServer((_req, res) => res.end('hello from allowed\n'));
    denied = createHttpServer((_req, res) => res.end('hello from denied\n'));
    allowedPort = await listenOn(allowed, HOST_IP);
    deniedPort = await listenOn(denied, HOST_IP);
    const cert = selfSignedCert(['models.test', 'tls.test']);
    tlsServer = createHttpsServer({ cert: cert.cert, key: cert.key }, (_req, res) => res.end('tls\n'));
    tlsPort = await listenOn(tlsServer, HOST_IP);
    models = await startFakeModelApi({ key: MODEL_KEY, cert: cert.cert, keyPem: cert.key, host: HOST_IP });
    certDir = mkdtempSync(join(tmpdir(), 'berth-egress-ca-'));
    writeFileSync(join(certDir, 'ca.pem'), cert.cert);
    proxyPort = await freePort(HOST_IP);
    h = await berthOnCluster({
      prefix: 'egress',
      profiles: { net: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'empty_dir' } } },
      profileFields: { net: { secret_env: ['ANTHROPIC_API_KEY'], network: { egress: 'allowlist', allow: ['allowed.test', 'tls.test'], brokers: { anthropic: 'ANTHROPIC_API_KEY' } } } },
      executor: { egress_proxy: { url: `http://${HOST_IP}:${proxyPort}` } },
      topLevel: {
        egress: {
          listen: `${HOST_IP}:${proxyPort}`,
          hosts: { 'allowed.test': HOST_IP, 'denied.test': HOST_IP, 'tls.test': HOST_IP, 'models.test': HOST_IP },
          brokers: { anthropic: { upstream: `https://models.test:${models.port}` } },
          ca_file: join(certDir, 'ca.pem'),
        },
      },
      controllerEnv: { ANTHROPIC_API_KEY: MODEL_KEY },
    });
  });

  afterAll(async () => {
    await h?.close();
    for (const s of [allowed, denied, tlsServer]) s?.close();
    await models?.close();
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  });

  const inPod = async (id: string, script: string, ...args: string[]): Promise<string> => {
    const r = await execText(h.controller, id, ['node', '-e', script, ...args]);
    return `${r.stdout}${r.stderr}`.trim();
  };

  it('an allowlisted session reaches only what its profile allows, and the policy holds without the proxy', async () => {
    const c = h.controller;
    const s = await launchReady(c, { executor: 'net', env: FAST_AGENT_ENV, name: 'fenced' });
    const net = h.admin.makeApiClient(NetworkingV1Api);
    const policies = (await net.listNamespacedNetworkPolicy({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${s.id}` })).items;
    expect(policies.map((p) => p.metadata?.name), 'one policy for the session').toHaveLength(1);
    const [pod] = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${s.id}` })).items;
    expect(Date.parse(String(policies[0]!.metadata!.creationTimestamp)), 'the policy is not younger than its Pod').toBeLessThanOrEqual(Date.parse(String(pod!.metadata!.creationTimestamp)));

    // The test cluster's enforcer (kube-network-policies) learns a new Pod's address a moment after
    // the Pod starts; the launch waited until the Pod could not reach the API server before it was
    // ready, so the policy holds from the agent's first instruction on (no wait here).
    expect(await inPod(s.id, PROXY_GET, `http://allowed.test:${allowedPort}/`), 'allowed, through the proxy').toBe('200 hello from allowed');
    expect(await inPod(s.id, PROXY_GET, `http://denied.test:${deniedPort}/`), 'denied by the proxy').toMatch(/^403 /);
    // the proxy bypassed: the policy drops direct connections (a timeout, not a refusal)
    expect(await inPod(s.id, DIRECT, HOST_IP, String(allowedPort)), 'the allowed host, directly').not.toBe('CONNECTED');
    expect(await inPod(s.id, DIRECT, '169.254.169.254', '80'), 'the metadata address').not.toBe('CONNECTED');
    const api = new URL(h.admin.getCurrentCluster()!.server);
    expect(await inPod(s.id, DIRECT, api.hostname, api.port || '443'), 'the API server').not.toBe('CONNECTED');
    // a CONNECT to an allowed name whose ClientHello names another host is cut before any byte goes upstream
    expect(await inPod(s.id, CONNECT_SNI, 'tls.test', String(tlsPort), 'tls.test'), 'matching SNI').toContain('TLS-OK');
    expect(await inPod(s.id, CONNECT_SNI, 'tls.test', String(tlsPort), 'denied.test'), 'SNI of another host').not.toContain('TLS-OK');

    const store = InventoryStore.open({ dataDir: h.dataDir });
    try {
      const records = await waitFor('the connections recorded', async () => {
        const rows = await store.listEgressRecords(s.id);
        return rows.some((r) => r.host === 'denied.test' && !r.allowed) && rows.some((r) => r.host === 'allowed.test' && r.allowed) ? rows : undefined;
      }, { timeoutMs: 15_000, intervalMs: 250 });
      expect(records.find((r) => r.host === 'allowed.test')).toMatchObject({ port: allowedPort, allowed: true, status: 200 });
      expect(records.find((r) => r.host === 'denied.test')).toMatchObject({ allowed: false, reason: 'not_allowed', status: 403 });
    } finally {
      await store.close();
    }
  });

  it('the agent calls the model API through the broker and never holds the key; its token dies with the stop', async () => {
    const c = h.controller;
    const s = await launchReady(c, { executor: 'net', env: FAST_AGENT_ENV, name: 'brokered' });
    const reply = await inPod(s.id, BROKER_CALL);
    expect(reply, 'the broker answered with the API reply').toMatch(/^200 /);
    const seen = models.requests.at(-1);
    expect(seen?.apiKey, 'the API got the real key').toBe(MODEL_KEY);
    const token = (await inPod(s.id, 'console.log(process.env.ANTHROPIC_API_KEY)')).trim();
    expect(token.length).toBeGreaterThan(20);
    expect(models.requests.some((r) => r.apiKey === token || r.authorization?.includes(token)), 'the token never went upstream').toBe(false);

    // the key in no process environment of the Pod, no file Berth wrote, not the Pod spec
    // (the key is given encoded: a command line is recorded in the workspace's process records)
    const encoded = Buffer.from(MODEL_KEY).toString('base64');
    const grep = await execText(c, s.id, ['sh', '-c', `cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -cF -- "$(echo ${encoded} | base64 -d)"; echo ${encoded} | base64 -d | grep -rlF -f - /opt/berth /run/berth /workspace 2>/dev/null | wc -l`]);
    expect(grep.stdout.trim().split(/\s+/), 'no environ line and no file holds the key').toEqual(['0', '0']);
    const [pod] = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${s.id}` })).items;
    expect(JSON.stringify(pod)).not.toContain(MODEL_KEY);
    for (const f of readdirSync(h.dataDir, { recursive: true, withFileTypes: true })) {
      if (f.isFile()) expect(readFileSync(join(f.parentPath, f.name)).includes(MODEL_KEY), `${f.name} holds the key`).toBe(false);
    }

    const proxyCredential = (await inPod(s.id, 'console.log(process.env.HTTP_PROXY)')).trim();
    await c.stop(s.id);
    // from the host, with the stopped session's credential: refused at once
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(proxyCredential);
      const sock = connect({ host: u.hostname, port: Number(u.port) }, () => {
        const auth = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
        sock.write(`GET http://allowed.test:${allowedPort}/ HTTP/1.1\r\nHost: allowed.test\r\nProxy-Authorization: Basic ${auth}\r\nConnection: close\r\n\r\n`);
      });
      let text = '';
      sock.on('data', (d: Buffer) => (text += d.toString()));
      sock.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0)));
      sock.on('error', reject);
    });
    expect(status, "the stopped session's token is refused").toBe(407);
    await c.remove(s.id);
  });

  it('rm deletes the policy; one left behind by a killed controller is swept', async () => {
    const c = h.controller;
    const s = await launchReady(c, { executor: 'net', env: FAST_AGENT_ENV, name: 'gone' });
    const net = h.admin.makeApiClient(NetworkingV1Api);
    const bySession = async (id: string) => (await net.listNamespacedNetworkPolicy({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${id}` })).items;
    expect(await bySession(s.id)).toHaveLength(1);
    await c.remove(s.id);
    expect(await bySession(s.id), 'removed with its session').toHaveLength(0);

    // what a controller killed between the policy's create and its checkpoint leaves: our labels and installation id, no session
    const installation = readFileSync(join(h.dataDir, 'state', 'installation-id'), 'utf8').trim();
    const leftover = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'berth-leftover', labels: { 'app.kubernetes.io/managed-by': 'berth', 'app.kubernetes.io/name': 'berth-agent', 'app.kubernetes.io/component': 'agent-session', 'app.kubernetes.io/instance': 'ghost-inst', 'berth.dev/instance-id': 'ghost-inst', 'berth.dev/session-id': 'ghost-sess', 'berth.dev/executor': 'cluster', 'berth.dev/profile': 'net' }, annotations: { 'berth.dev/installation': installation, 'berth.dev/create-nonce': 'a'.repeat(64) } }, spec: { podSelector: { matchLabels: { 'berth.dev/instance-id': 'ghost-inst' } }, policyTypes: ['Ingress'] } };
    await net.createNamespacedNetworkPolicy({ namespace: h.ns.name, body: leftover });
    // the sweep as the controller runs it, without its minimum age (the object is seconds old)
    const config = loadConfig({ dataDir: h.dataDir, installRoot: findInstallRoot(join(ROOT, 'src', 'config')) });
    const executor = createExecutors(config, { dataDir: h.dataDir, logger: silentLogger, installRoot: ROOT }).get('cluster') as KubernetesExecutor;
    const report = await executor.sweepUnrecorded((owner) => owner.sessionId !== 'ghost-sess', { minAgeMs: 0 }).finally(() => executor.close());
    expect(report.deleted, 'the orphaned policy swept').toContain(`NetworkPolicy ${h.ns.name}/berth-leftover (session ghost-sess)`);
    expect(await bySession('ghost-sess')).toHaveLength(0);
  });
});
