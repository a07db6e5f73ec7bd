import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { keepShellAlive } from './shell-route.js';

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    for (const c of s.clients) c.terminate();
    await new Promise((r) => s.close(r));
  }
});

/** A server-side socket under `keepShellAlive(intervalMs)` and the client at its other end. */
async function pair(intervalMs: number, autoPong: boolean): Promise<{ server: WebSocket; client: WebSocket }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  servers.push(wss);
  await once(wss, 'listening');
  const accepted = once(wss, 'connection') as Promise<[WebSocket]>;
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, { autoPong });
  const [server] = await accepted;
  keepShellAlive(server, intervalMs);
  return { server, client };
}

describe('keepShellAlive', () => {
  it('pings an idle shell socket, which stays open while its peer answers (traffic a proxy read timeout sees)', async () => {
    const { server, client } = await pair(20, true);
    let pings = 0;
    client.on('ping', () => pings++);
    while (pings < 5) await once(client, 'ping');
    expect(server.readyState).toBe(WebSocket.OPEN);
    expect(client.readyState).toBe(WebSocket.OPEN);
    client.close();
    await once(server, 'close');
  });

  it('terminates a socket whose peer stops answering pings (the shell then ends)', async () => {
    const { server, client } = await pair(30, false);
    const [code] = (await once(server, 'close')) as [number];
    expect(code).toBe(1006); // terminated: no close frame
    client.terminate();
  });
});
