import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { keepAlive } from './websocket.js';

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    for (const c of s.clients) c.terminate();
    await new Promise((r) => s.close(r));
  }
});

async function pair(autoPong: boolean): Promise<WebSocket> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong });
  servers.push(server);
  await once(server, 'listening');
  const ws = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await once(ws, 'open');
  return ws;
}

describe('keepAlive', () => {
  it('closes a socket whose peer stops answering pings, with an error saying so', async () => {
    const ws = await pair(false);
    const dead: Error[] = [];
    keepAlive(ws, { intervalMs: 50, onDead: (err) => dead.push(err) });
    await once(ws, 'close');
    expect(dead).toHaveLength(1);
    expect(dead[0]?.message).toMatch(/no answer to a keep-alive ping/);
  });

  it('keeps a socket whose peer answers', async () => {
    const ws = await pair(true);
    const dead: Error[] = [];
    let pongs = 0;
    ws.on('pong', () => pongs++);
    keepAlive(ws, { intervalMs: 20, onDead: (err) => dead.push(err) });
    while (pongs < 5) await once(ws, 'pong');
    expect(ws.readyState).toBe(WebSocket.OPEN);
    expect(dead).toEqual([]);
    ws.close();
  });
});
