import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { pingUntilGone } from './ws-ping.js';

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    for (const c of s.clients) c.terminate();
    await new Promise((r) => s.close(r));
  }
});

/** Both ends of a fresh connection; each end answers pings only when told to. */
async function pair(opts: { serverPongs: boolean; clientPongs: boolean }): Promise<{ server: WebSocket; client: WebSocket }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong: opts.serverPongs });
  servers.push(wss);
  await once(wss, 'listening');
  const accepted = once(wss, 'connection') as Promise<[WebSocket]>;
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, { autoPong: opts.clientPongs });
  const [server] = await accepted;
  if (client.readyState !== WebSocket.OPEN) await once(client, 'open');
  return { server, client };
}

describe('pingUntilGone', () => {
  it('client side (an exec or port-forward socket): closes when the peer stops answering, with an error saying so', async () => {
    const { client } = await pair({ serverPongs: false, clientPongs: true });
    const dead: Error[] = [];
    pingUntilGone(client, { intervalMs: 50, onDead: (err) => dead.push(err) });
    await once(client, 'close');
    expect(dead).toHaveLength(1);
    expect(dead[0]?.message).toMatch(/no answer to a keep-alive ping/);
  });

  it('client side: keeps a socket whose peer answers', async () => {
    const { client } = await pair({ serverPongs: true, clientPongs: true });
    const dead: Error[] = [];
    let pongs = 0;
    client.on('pong', () => pongs++);
    pingUntilGone(client, { intervalMs: 20, onDead: (err) => dead.push(err) });
    while (pongs < 5) await once(client, 'pong');
    expect(client.readyState).toBe(WebSocket.OPEN);
    expect(dead).toEqual([]);
    client.close();
  });

  it('server side (a shell socket): an idle shell is pinged and stays open while its peer answers (traffic a proxy read timeout sees)', async () => {
    const { server, client } = await pair({ serverPongs: true, clientPongs: true });
    pingUntilGone(server, { intervalMs: 20 });
    let pings = 0;
    client.on('ping', () => pings++);
    while (pings < 5) await once(client, 'ping');
    expect(server.readyState).toBe(WebSocket.OPEN);
    client.close();
    await once(server, 'close');
  });

  it('server side: terminates a socket whose peer stops answering (the shell then ends)', async () => {
    const { server, client } = await pair({ serverPongs: true, clientPongs: false });
    pingUntilGone(server, { intervalMs: 30 });
    const [code] = (await once(server, 'close')) as [number];
    expect(code).toBe(1006); // terminated: no close frame
    client.terminate();
  });
});
