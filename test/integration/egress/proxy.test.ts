/**
 * The egress proxy's CONNECT path against real servers on 127.0.0.1: a TLS tunnel to an allowed name
 * works end to end; a ClientHello whose SNI differs from the CONNECT host, one without SNI and non-TLS
 * bytes on port 443 are refused before any byte goes upstream; a host off the allow list gets 403, no
 * credential 407; revoking a session closes its open tunnels and refuses its credential. Every
 * connection is recorded. Names map to local ports through `resolveUpstream` (no DNS).
 */
import { once } from 'node:events';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { connect as tlsConnect, createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectThrough, listen, selfSignedCert, startProxy, type TestCert, type TestProxy } from './support.js';

let cert: TestCert;
let tlsServer: TlsServer;
let tcpEcho: NetServer;
let secureConnections = 0;
let t: TestProxy;
let alice: string;

beforeAll(async () => {
  cert = selfSignedCert(['allowed.test', 'other.test']);
  tlsServer = createTlsServer({ key: cert.key, cert: cert.cert }, (socket) => {
    secureConnections += 1;
    socket.on('data', (chunk: Buffer) => socket.write(`pong:${chunk.toString('utf8')}`));
    socket.on('error', () => undefined);
  });
  tcpEcho = createNetServer((socket) => {
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  const tlsPort = await listen(tlsServer);
  const tcpPort = await listen(tcpEcho);
  const routes = new Map([
    ['allowed.test:443', tlsPort],
    ['other.test:443', tlsPort],
    ['allowed.test:7000', tcpPort],
    ['127.0.0.1:443', tlsPort],
  ]);
  t = await startProxy(routes);
  alice = t.sessions.add('alice', 'alice-secret-token', ['allowed.test', '127.0.0.1']);
  t.sessions.add('bob', 'bob-secret-token', ['other.test']);
});

afterAll(async () => {
  await t?.proxy.close();
  tlsServer?.close();
  tcpEcho?.close();
});

/** TLS over an open tunnel; resolves once the handshake completed. */
async function tlsOver(socket: Socket, servername: string | undefined): Promise<TLSSocket> {
  const tls = tlsConnect({ socket, ca: cert.cert, ...(servername === undefined ? { checkServerIdentity: () => undefined } : { servername }) });
  await once(tls, 'secureConnect');
  return tls;
}

async function roundTrip(tls: TLSSocket, text: string): Promise<string> {
  tls.write(text);
  const [chunk] = (await once(tls, 'data')) as [Buffer];
  return chunk.toString('utf8');
}

/** A tunnel the proxy closes: resolves when the socket closed (an error on the way is expected). */
async function closedBy(socket: Socket, send: () => void): Promise<void> {
  socket.on('error', () => undefined);
  const closed = once(socket, 'close');
  send();
  await closed;
}

describe('CONNECT', () => {
  it('tunnels TLS to an allowed name end to end and records the bytes', async () => {
    const tunnel = await connectThrough(t.port, 'allowed.test:443', alice);
    expect(tunnel.status).toBe(200);
    const tls = await tlsOver(tunnel.socket, 'allowed.test');
    expect(await roundTrip(tls, 'ping')).toBe('pong:ping');
    tls.end();
    const record = await t.records.next((r) => r.sessionId === 'alice' && r.method === 'CONNECT' && r.allowed && r.host === 'allowed.test');
    expect(record).toMatchObject({ port: 443, status: 200 });
    expect(record.reason).toBeUndefined();
    expect(record.bytesUp).toBeGreaterThan(200); // ClientHello and the rest of the handshake
    expect(record.bytesDown).toBeGreaterThan(200);
    expect(record.endedAt).toBeGreaterThanOrEqual(record.startedAt);
  });

  it('refuses a ClientHello whose SNI differs from the CONNECT host, before any byte goes upstream', async () => {
    const before = secureConnections;
    const tunnel = await connectThrough(t.port, 'allowed.test:443', alice);
    expect(tunnel.status).toBe(200);
    await closedBy(tunnel.socket, () => {
      tlsConnect({ socket: tunnel.socket, ca: cert.cert, servername: 'other.test' }).on('error', () => undefined);
    });
    const record = await t.records.next((r) => r.reason === 'sni_mismatch');
    expect(record).toMatchObject({ sessionId: 'alice', host: 'allowed.test', port: 443, method: 'CONNECT', allowed: false, bytesUp: 0 });
    expect(secureConnections).toBe(before);
  });

  it('refuses a ClientHello without SNI to a named host, and non-TLS bytes on port 443', async () => {
    const noSni = await connectThrough(t.port, 'allowed.test:443', alice);
    await closedBy(noSni.socket, () => {
      tlsConnect({ socket: noSni.socket, ca: cert.cert, checkServerIdentity: () => undefined }).on('error', () => undefined);
    });
    expect(await t.records.next((r) => r.reason === 'no_sni')).toMatchObject({ allowed: false, bytesUp: 0 });
    const plain = await connectThrough(t.port, 'allowed.test:443', alice);
    await closedBy(plain.socket, () => plain.socket.write('GET / HTTP/1.1\r\nHost: other.test\r\n\r\n'));
    expect(await t.records.next((r) => r.reason === 'not_tls')).toMatchObject({ allowed: false, bytesUp: 0 });
  });

  it('passes non-TLS bytes on other ports, and TLS without SNI to an allowed IP literal', async () => {
    const tunnel = await connectThrough(t.port, 'allowed.test:7000', alice);
    expect(tunnel.status).toBe(200);
    tunnel.socket.write('SSH-2.0-test\r\n');
    const [echo] = (await once(tunnel.socket, 'data')) as [Buffer];
    expect(echo.toString()).toBe('SSH-2.0-test\r\n');
    tunnel.socket.end();
    expect(await t.records.next((r) => r.port === 7000)).toMatchObject({ allowed: true, sessionId: 'alice' });
    const ip = await connectThrough(t.port, '127.0.0.1:443', alice);
    expect(ip.status).toBe(200);
    const tls = await tlsOver(ip.socket, undefined);
    expect(await roundTrip(tls, 'ip')).toBe('pong:ip');
    tls.destroy();
  });

  it('answers 403 for a host off the allow list and for an address no entry names', async () => {
    const denied = await connectThrough(t.port, 'other.test:443', alice);
    expect(denied.status).toBe(403);
    expect(denied.body).toContain('other.test is not on this session');
    expect(await t.records.next((r) => r.reason === 'not_allowed')).toMatchObject({ sessionId: 'alice', host: 'other.test', port: 443, allowed: false, status: 403 });
    const ip = await connectThrough(t.port, '2130706433:443', alice); // 127.0.0.1 spelled as a number
    expect(ip.status).toBe(200); // the same address as the allowed 127.0.0.1 entry
    ip.socket.destroy();
    const other = await connectThrough(t.port, '[::1]:443', alice);
    expect(other.status).toBe(403);
    expect(await t.records.next((r) => r.reason === 'ip_literal')).toMatchObject({ host: '::1', allowed: false });
  });

  it('answers 407 with a challenge for no credential or a wrong one, never echoing it', async () => {
    const none = await connectThrough(t.port, 'allowed.test:443');
    expect(none.status).toBe(407);
    expect(none.headers['proxy-authenticate']).toBe('Basic realm="berth-egress"');
    expect(await t.records.next((r) => r.reason === 'no_credential')).toMatchObject({ sessionId: null, allowed: false, status: 407 });
    const wrong = await connectThrough(t.port, 'allowed.test:443', 'Bearer alice-wrong-token');
    expect(wrong.status).toBe(407);
    expect(`${wrong.body}${JSON.stringify(wrong.headers)}`).not.toContain('alice-wrong-token');
    expect(JSON.stringify(t.records.all)).not.toContain('token');
    const bearer = await connectThrough(t.port, 'allowed.test:7000', 'Bearer alice-secret-token');
    expect(bearer.status).toBe(200);
    bearer.socket.destroy();
  });

  it('closes the open tunnels of a revoked session and refuses its credential from then on', async () => {
    const carol = t.sessions.add('carol', 'carol-secret-token', ['allowed.test']);
    const tunnel = await connectThrough(t.port, 'allowed.test:443', carol);
    const tls = await tlsOver(tunnel.socket, 'allowed.test');
    expect(await roundTrip(tls, 'before')).toBe('pong:before');
    const bystander = await connectThrough(t.port, 'allowed.test:443', alice);
    const bystanderTls = await tlsOver(bystander.socket, 'allowed.test');
    tls.on('error', () => undefined);
    const closed = once(tls, 'close');
    expect(t.sessions.revoke('carol')).toBe(1);
    await closed;
    expect(await t.records.next((r) => r.sessionId === 'carol' && r.reason === 'revoked')).toMatchObject({ allowed: true, host: 'allowed.test' });
    expect((await connectThrough(t.port, 'allowed.test:443', carol)).status).toBe(407);
    expect(await roundTrip(bystanderTls, 'still')).toBe('pong:still'); // other sessions are untouched
    bystanderTls.destroy();
  });

  it('answers 502 when the upstream refuses the connection', async () => {
    const closed = createNetServer();
    const port = await listen(closed);
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = await startProxy(new Map([['down.test:443', port]]));
    try {
      const dave = down.sessions.add('dave', 'dave-secret-token', ['down.test']);
      const tunnel = await connectThrough(down.port, 'down.test:443', dave);
      expect([tunnel.status, tunnel.body]).toEqual([502, 'upstream unreachable\n']);
      expect(await down.records.next((r) => r.sessionId === 'dave')).toMatchObject({ allowed: true, reason: 'upstream_unreachable', status: 502 });
    } finally {
      await down.proxy.close();
    }
  });

  it('closes a tunnel that stays idle past idleTimeoutMs', async () => {
    const echo = createNetServer((s) => s.on('error', () => undefined).pipe(s));
    const idle = await startProxy(new Map([['allowed.test:7000', await listen(echo)]]), { connectTimeoutMs: 5_000, idleTimeoutMs: 200 });
    try {
      const erin = idle.sessions.add('erin', 'erin-secret-token', ['allowed.test']);
      const tunnel = await connectThrough(idle.port, 'allowed.test:7000', erin);
      expect(tunnel.status).toBe(200);
      await closedBy(tunnel.socket, () => undefined);
      expect(await idle.records.next((r) => r.sessionId === 'erin')).toMatchObject({ allowed: true, reason: 'idle_timeout' });
    } finally {
      await idle.proxy.close();
      echo.close();
    }
  });
});
