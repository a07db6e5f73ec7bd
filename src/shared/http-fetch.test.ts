import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { heldOrigins, httpFetch } from './http-fetch.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; server: Server; connections: () => number }> {
  const server = createServer(handler);
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, connections: () => connections };
}

describe('httpFetch', () => {
  it('sends method, headers and body, and returns status, headers and text like fetch', async () => {
    const s = await serve((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c)).on('end', () => {
        res.writeHead(201, { 'content-type': 'application/json', 'x-echo': req.headers['authorization'] ?? '' });
        res.end(JSON.stringify({ method: req.method, url: req.url, body, length: req.headers['content-length'] }));
      });
    });
    const res = await httpFetch(`${s.url}/v1/x?y=1`, { method: 'POST', headers: { authorization: 'Bearer t' }, body: '{"é":1}' });
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get('x-echo')).toBe('Bearer t');
    expect(JSON.parse(await res.text())).toEqual({ method: 'POST', url: '/v1/x?y=1', body: '{"é":1}', length: '8' });
  });

  it('returns error statuses and empty bodies without throwing', async () => {
    const s = await serve((req, res) => {
      res.writeHead(req.url === '/gone' ? 404 : 204);
      res.end(req.url === '/gone' ? 'not here' : undefined);
    });
    const missing = await httpFetch(`${s.url}/gone`, { method: 'GET' });
    expect([missing.status, missing.ok, await missing.text()]).toEqual([404, false, 'not here']);
    const empty = await httpFetch(`${s.url}/empty`, { method: 'DELETE' });
    expect([empty.status, await empty.text()]).toEqual([204, '']);
  });

  it('reuses one connection for calls in a row', async () => {
    const s = await serve((_req, res) => res.end('ok'));
    for (let i = 0; i < 5; i++) expect(await (await httpFetch(s.url, { method: 'GET' })).text()).toBe('ok');
    expect(s.connections()).toBe(1);
  });

  it('keeps nothing for an origin once its server has closed the connection', async () => {
    const s = await serve((_req, res) => res.end('ok'));
    const origin = new URL(s.url).host;
    await httpFetch(s.url, { method: 'GET' });
    expect(heldOrigins().some((o) => o.startsWith(origin))).toBe(true);
    s.server.closeAllConnections();
    await new Promise((r) => setTimeout(r, 50));
    expect(heldOrigins().some((o) => o.startsWith(origin))).toBe(false);
  });

  it('rejects as fetch does: the cause carries the socket error code', async () => {
    const s = await serve((_req, res) => res.end());
    const url = s.url;
    await new Promise((r) => s.server.close(r));
    servers.length = 0;
    const err = await httpFetch(url, { method: 'GET' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
  });

  it('rejects with the signal\'s reason when aborted, before or while waiting', async () => {
    const s = await serve(() => {
      /* never answers */
    });
    const before = AbortSignal.abort(new Error('early'));
    await expect(httpFetch(s.url, { method: 'GET', signal: before })).rejects.toThrow('early');
    const ctl = new AbortController();
    const pending = httpFetch(s.url, { method: 'GET', signal: ctl.signal });
    setTimeout(() => ctl.abort(new Error('late')), 20);
    await expect(pending).rejects.toThrow('late');
  });

  it('hands over the body as a stream while the server is still writing it', async () => {
    let finish: () => void = () => undefined;
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      finish = () => res.end('data: two\n\n');
    });
    const res = await httpFetch(s.url, { method: 'GET' });
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    expect(dec.decode((await reader.read()).value), 'the first event, before the response ended').toBe('data: one\n\n');
    finish();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += dec.decode(r.value);
    expect(rest).toBe('data: two\n\n');
  });

  it('a body cut mid-way rejects the read instead of returning a short body', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('only part');
      setTimeout(() => res.destroy(), 10);
    });
    const res = await httpFetch(s.url, { method: 'GET' });
    await expect(res.text()).rejects.toThrow(/cut/);
  });

  it('an abort while the body is read rejects the read', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200);
      res.write('start');
    });
    const ctl = new AbortController();
    const res = await httpFetch(s.url, { method: 'GET', signal: ctl.signal });
    const reading = res.text();
    setTimeout(() => ctl.abort(new Error('stop')), 20);
    await expect(reading).rejects.toThrow();
  });

  it('refuses other protocols', async () => {
    await expect(httpFetch('https://127.0.0.1:1/', { method: 'GET' })).rejects.toThrow(/only http:/);
  });
});
