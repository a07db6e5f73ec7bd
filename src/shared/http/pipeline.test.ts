import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readJson } from './body.js';
import { HttpError, isHttpError } from './errors.js';
import { createRequestListener, routeRequest, type RequestOutcome } from './pipeline.js';
import { sendJson } from './respond.js';
import { Router } from './router.js';

type Handle = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

let server: Server | undefined;
const outcomes: RequestOutcome[] = [];
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
  outcomes.length = 0;
});

const toHttpError = (err: unknown): HttpError => (isHttpError(err) ? err : new HttpError('internal', 'internal error', { cause: err }));

async function serve(handle: Handle): Promise<number> {
  server = createServer(createRequestListener({ handle, toHttpError, onDone: (o) => outcomes.push(o) }));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: unknown;
}

/** A raw request (fetch would normalize paths and refuse some bodies). */
function call(port: number, method: string, path: string, opts: { body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: opts.headers ?? {} }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('error', () => undefined);
      res.on('close', () => {
        if (!res.complete) reject(new Error('the response was cut off'));
        else resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('routeRequest and createRequestListener', () => {
  const router = new Router<string>().add('GET', '/items/:id', 'get').add('DELETE', '/items/:id', 'delete');
  const routed: Handle = async (req, res) => {
    const { handler, params, url } = routeRequest(router, req, res);
    sendJson(res, 200, { handler, params, q: url.searchParams.get('q') });
  };

  it('answers a route with its handler, parameters and query', async () => {
    const port = await serve(routed);
    expect(await call(port, 'GET', '/items/a%20b?q=1')).toMatchObject({ status: 200, body: { handler: 'get', params: { id: 'a b' }, q: '1' } });
    expect(outcomes).toEqual([expect.objectContaining({ method: 'GET', path: '/items/a%20b', status: 200 })]);
  });

  it('answers 404, 405 with Allow and 400 for a malformed percent-encoding, in the error envelope', async () => {
    const port = await serve(routed);
    expect(await call(port, 'GET', '/nope')).toMatchObject({ status: 404, body: { error: { code: 'not_found', message: 'no route for /nope' } } });
    const wrong = await call(port, 'PUT', '/items/x');
    expect(wrong).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });
    expect(wrong.headers['allow']).toBe('GET, DELETE');
    expect(await call(port, 'GET', '/items/%E0%A4%A')).toMatchObject({ status: 400, body: { error: { code: 'bad_request' } } });
  });

  it('runs the server’s check before telling a stranger that a route is missing', async () => {
    const port = await serve(async (req, res) => {
      routeRequest(router, req, res, () => {
        if (req.headers.authorization === undefined) throw new HttpError('unauthorized', 'who are you');
      });
    });
    expect((await call(port, 'GET', '/nope')).status).toBe(401);
    expect((await call(port, 'PUT', '/items/x')).status).toBe(401);
    expect((await call(port, 'GET', '/nope', { headers: { authorization: 'x' } })).status).toBe(404);
  });

  it('answers anything else thrown as the server maps it, and tells the outcome with the error', async () => {
    const boom = new Error('boom');
    const port = await serve(async () => {
      throw boom;
    });
    expect(await call(port, 'GET', '/x?token=secret')).toMatchObject({ status: 500, body: { error: { code: 'internal', message: 'internal error' } } });
    expect(outcomes[0]).toMatchObject({ path: '/x', status: 500, error: { code: 'internal', cause: boom } });
  });

  it('drops the connection of a response that had started when the error came', async () => {
    const port = await serve(async (_req, res) => {
      res.writeHead(200);
      res.write('partial');
      throw new HttpError('internal', 'late');
    });
    await expect(call(port, 'GET', '/x')).rejects.toThrow('cut off');
  });
});

describe('readJson', () => {
  const Schema = z.strictObject({ name: z.string(), tags: z.array(z.string()).optional() });

  async function serveBody(maxBytes = 64): Promise<number> {
    return serve(async (req, res) => sendJson(res, 200, await readJson(req, Schema, maxBytes)));
  }

  it('decodes a body within the limit', async () => {
    const port = await serveBody();
    expect(await call(port, 'POST', '/', { body: '{"name":"x"}' })).toMatchObject({ status: 200, body: { name: 'x' } });
  });

  it('answers 413 for a body over the limit, read to its end, and closes the connection', async () => {
    const port = await serveBody();
    const res = await call(port, 'POST', '/', { body: JSON.stringify({ name: 'x'.repeat(100) }) });
    expect(res).toMatchObject({ status: 413, body: { error: { code: 'body_too_large', message: 'request body exceeds the limit of 64 bytes' } } });
    expect(res.headers['connection']).toBe('close');
  });

  it('answers 413 at once for a declared length far past the limit', async () => {
    const port = await serveBody();
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'content-length': String(1024 * 1024 * 1024) } });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write('{"name":');
    });
    expect(status).toBe(413);
  });

  it('takes an empty body as null: a schema that wants an object refuses it', async () => {
    const port = await serveBody();
    expect(await call(port, 'POST', '/')).toMatchObject({ status: 400, body: { error: { code: 'bad_request', message: expect.stringMatching(/^body: .*expected object, received null/) } } });
    const open = await serve(async (req, res) => sendJson(res, 200, { value: await readJson(req, z.unknown(), 64) }));
    expect(await call(open, 'POST', '/')).toMatchObject({ status: 200, body: { value: null } });
  });

  it('answers malformed JSON with 400', async () => {
    const port = await serveBody();
    expect(await call(port, 'POST', '/', { body: '{"name":' })).toMatchObject({ status: 400, body: { error: { code: 'bad_request', message: 'malformed JSON in request body' } } });
  });

  it('names every offending field in the message and the first in `field`', async () => {
    const port = await serveBody(1024);
    const res = await call(port, 'POST', '/', { body: JSON.stringify({ name: 1, tags: [2], extra: true }) });
    expect(res.status).toBe(400);
    const { error } = res.body as { error: { message: string; field?: string } };
    expect(error.field).toBe('name');
    expect(error.message).toMatch(/^name: .*expected string.*; tags\.0: .*expected string.*; body: .*"extra"/);
  });
});
