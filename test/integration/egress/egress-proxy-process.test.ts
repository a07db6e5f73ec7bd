/**
 * `berth egress-proxy`, the proxy as a process of its own (the chart's Deployment), over an inventory
 * another process writes (here SQLite in one data dir; Postgres in the chart): a session's token
 * stored by the controller lets its connections through to its allowed host and records them; when
 * the controller deletes the credential (a stop, an rm), the proxy refuses the token within a second
 * and closes the session's open tunnel — without being told, from its own re-check of the store.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { egressTokenDigest } from '../../../src/controller/egress.js';
import { InventoryStore } from '../../../src/inventory/store.js';
import { CLI, ensureBuilt } from '../cli/helpers.js';
import { connectThrough, httpThrough } from './support.js';

function hostAddress(): string {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  throw new Error('this test needs a non-loopback IPv4 address on this machine (the proxy refuses loopback destinations)');
}

const SESSION = 'egress-proc-1';
const TOKEN = 'tok-0123456789abcdef0123456789abcdef';
const basic = `Basic ${Buffer.from(`${SESSION}:${TOKEN}`).toString('base64')}`;

describe('berth egress-proxy as a process of its own', () => {
  let dataDir: string;
  let store: InventoryStore;
  let upstream: Server;
  let child: ChildProcess;
  let port = 0;
  let upstreamPort = 0;
  const ip = hostAddress();

  beforeAll(async () => {
    ensureBuilt();
    dataDir = mkdtempSync(join(tmpdir(), 'berth-egress-proc-'));
    upstream = createServer((_req, res) => res.end('upstream says hi\n'));
    await new Promise<void>((resolve) => upstream.listen(0, ip, () => resolve()));
    upstreamPort = (upstream.address() as { port: number }).port;
    writeFileSync(join(dataDir, 'berth.yaml'), JSON.stringify({ egress: { hosts: { 'allowed.test': ip } } }));
    store = InventoryStore.open({ dataDir });
    await store.insertSession({
      id: SESSION,
      name: null,
      executor: 'local',
      agent: 'demo',
      repository: { path: '/r' },
      request: { env: {}, secretEnv: [], prompt: null, agentCommand: ['x'], agentEnv: {}, profileEnv: {} },
      state: 'ready',
      error: null,
      stages: [],
      workspacePath: null,
    });
    await store.putEgressCredential({ sessionId: SESSION, tokenDigest: egressTokenDigest(TOKEN), policy: JSON.stringify({ allow: ['allowed.test'], brokers: {} }) });
    child = spawn(process.execPath, [CLI, 'egress-proxy', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.resume();
    await new Promise<void>((resolve, reject) => {
      const check = setInterval(() => {
        const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
        if (m) {
          clearInterval(check);
          port = Number(m[1]);
          resolve();
        }
      }, 50);
      child.once('exit', (code) => reject(new Error(`berth egress-proxy exited (${code}): ${out}`)));
    });
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    upstream?.close();
    await store?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the stored session, records its connections, and drops it within a second of the credential going', async () => {
    const ok = await httpThrough(port, `http://allowed.test:${upstreamPort}/`, { headers: { 'Proxy-Authorization': basic } });
    expect([ok.status, ok.body]).toEqual([200, 'upstream says hi\n']);
    expect((await httpThrough(port, `http://denied.test:${upstreamPort}/`, { headers: { 'Proxy-Authorization': basic } })).status).toBe(403);

    const tunnel = await connectThrough(port, `allowed.test:${upstreamPort}`, basic);
    expect(tunnel.status).toBe(200);
    const closed = once(tunnel.socket, 'close');
    tunnel.socket.on('error', () => undefined);
    tunnel.socket.resume();

    // what a stop does in the controller's process
    await store.deleteEgressCredential(SESSION);
    await closed; // the proxy's own re-check of the store closed the open tunnel
    const refused = await httpThrough(port, `http://allowed.test:${upstreamPort}/`, { headers: { 'Proxy-Authorization': basic } });
    expect(refused.status, 'the token is refused').toBe(407);

    const records = await (async () => {
      for (let i = 0; i < 100; i++) {
        const rows = await store.listEgressRecords(SESSION);
        if (rows.length >= 3) return rows;
        await new Promise((r) => setTimeout(r, 100));
      }
      return store.listEgressRecords(SESSION);
    })();
    expect(records.map((r) => [r.host, r.allowed, r.reason])).toEqual([
      ['allowed.test', true, null],
      ['denied.test', false, 'not_allowed'],
      ['allowed.test', true, 'revoked'],
    ]);
  });
});
