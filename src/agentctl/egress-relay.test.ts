import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, get, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startEgressRelay } from './egress-relay.js';

const log = pino({ level: 'silent' });

function getText(port: number, path: string): Promise<{ status: number | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    }).on('error', reject);
  });
}

describe('the egress relay', () => {
  const dirs: string[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const socketDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-relay-'));
    dirs.push(dir);
    return dir;
  };

  it('pipes each loopback connection to the Unix socket, a large body whole', async () => {
    const socket = join(socketDir(), 'proxy.sock');
    const big = 'x'.repeat(3 * 1024 * 1024);
    const proxy = createServer((req, res) => res.end(req.url === '/big' ? big : `proxy saw ${req.url}`));
    servers.push(proxy);
    await new Promise<void>((r) => proxy.listen(socket, r));
    const relay = await startEgressRelay({ host: '127.0.0.1', port: 0, socket }, log);
    try {
      expect(await getText(relay.port, 'http://example.com/a')).toEqual({ status: 200, body: 'proxy saw http://example.com/a' });
      const [one, two] = await Promise.all([getText(relay.port, '/big'), getText(relay.port, '/b')]);
      expect(one.body.length).toBe(big.length);
      expect(two.body).toBe('proxy saw /b');
    } finally {
      await relay.close();
    }
  });

  it('closes a connection whose socket is not there, and keeps serving', async () => {
    const dir = socketDir();
    const socket = join(dir, 'proxy.sock');
    const relay = await startEgressRelay({ host: '127.0.0.1', port: 0, socket }, log);
    try {
      await expect(getText(relay.port, '/')).rejects.toThrow();
      const proxy = createServer((_req, res) => res.end('up now'));
      servers.push(proxy);
      await new Promise<void>((r) => proxy.listen(socket, r));
      expect((await getText(relay.port, '/')).body).toBe('up now');
    } finally {
      await relay.close();
    }
  });

  it('refuses to start on a port that is taken', async () => {
    const taken = createServer();
    servers.push(taken);
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as { port: number }).port;
    await expect(startEgressRelay({ host: '127.0.0.1', port, socket: '/nonexistent.sock' }, log)).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
