/**
 * Internal addresses refused by address, whatever name leads there: with the default `blockAddress`
 * an allowed name resolving to loopback (by DNS) or mapped to the metadata address (by
 * `resolveUpstream`), and an exactly allowed loopback IP literal, get 403 `blocked_address` on
 * CONNECT and plain HTTP, recorded as denied, before any connection is tried. With an operator's
 * predicate that lets loopback pass, the same name connects, and the predicate saw the resolved
 * addresses.
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultBlockAddress } from '../../../src/egress/address.js';
import { connectThrough, httpThrough, startProxy, type TestProxy } from './support.js';

let echo: Server;
let port: number;
let strict: TestProxy;
let lenient: TestProxy;
let alice: string;
const checked: string[] = [];

beforeAll(async () => {
  echo = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  echo.listen(0); // every address of this host, both families: wherever `localhost` resolves to
  await once(echo, 'listening');
  port = (echo.address() as AddressInfo).port;
  const byDns = { resolveUpstream: (host: string, p: number) => (host === 'metadata.test' ? { host: '169.254.169.254', port: p } : { host, port: p }) };
  strict = await startProxy(new Map(), undefined, { ...byDns, blockAddress: defaultBlockAddress });
  lenient = await startProxy(new Map(), undefined, {
    ...byDns,
    blockAddress: (ip) => {
      checked.push(ip);
      return ip.startsWith('169.254.');
    },
  });
  alice = strict.sessions.add('alice', 'alice-secret-token', ['localhost', '127.0.0.1', 'metadata.test']);
  lenient.sessions.add('alice', 'alice-secret-token', ['localhost', 'metadata.test']);
});

afterAll(async () => {
  await strict?.proxy.close();
  await lenient?.proxy.close();
  echo?.close();
});

describe('blocked addresses', () => {
  it('refuses CONNECT to a name resolving to loopback, to the metadata address and to an allowed loopback literal', async () => {
    for (const authority of [`localhost:${String(port)}`, 'metadata.test:80', `127.0.0.1:${String(port)}`]) {
      const before = strict.records.all.length;
      const tunnel = await connectThrough(strict.port, authority, alice);
      expect([tunnel.status, tunnel.body], authority).toEqual([403, 'the destination resolves to an address the proxy does not connect to\n']);
      const record = await strict.records.next((r) => strict.records.all.indexOf(r) >= before);
      expect(record, authority).toMatchObject({ sessionId: 'alice', method: 'CONNECT', allowed: false, reason: 'blocked_address', status: 403, bytesUp: 0 });
    }
  });

  it('refuses plain HTTP to a name resolving to loopback', async () => {
    const reply = await httpThrough(strict.port, `http://localhost:${String(port)}/`, { headers: { 'proxy-authorization': alice } });
    expect(reply.status).toBe(403);
    expect(await strict.records.next((r) => r.method === 'GET')).toMatchObject({ host: 'localhost', allowed: false, reason: 'blocked_address', status: 403 });
  });

  it('connects where the operator\'s predicate lets the resolved address pass, and still refuses what it blocks', async () => {
    const tunnel = await connectThrough(lenient.port, `localhost:${String(port)}`, alice);
    expect(tunnel.status).toBe(200);
    expect(checked.length).toBeGreaterThan(0);
    expect(checked.every((ip) => ip === '127.0.0.1' || ip === '::1')).toBe(true);
    tunnel.socket.write('ping');
    const [chunk] = (await once(tunnel.socket, 'data')) as [Buffer];
    expect(chunk.toString()).toBe('ping');
    tunnel.socket.destroy();
    expect((await connectThrough(lenient.port, 'metadata.test:80', alice)).status).toBe(403);
  });
});
