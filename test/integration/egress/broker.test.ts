/**
 * The credential broker against a fake model API over real TLS (test/support/fake-model-api.ts): an
 * agent sends origin-form requests to `/broker/<provider>/…` with its session token as the API key;
 * the API receives the real key and never the token; the usage of JSON and streamed replies is
 * recorded; a stream reaches the client event by event; a 64 MB upload passes with the proxy's
 * buffers bounded; refusals (no or revoked token, a provider not configured or not allowed, no key,
 * an unreachable upstream) answer in the provider's error shape and are recorded; the real key
 * appears in no reply and no record. Names map to the fake API's port through `resolveUpstream`.
 */
import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_USAGE, startFakeModelApi, type FakeModelApi } from '../../support/fake-model-api.js';
import { selfSignedCert, startProxy, type TestProxy } from './support.js';

const REAL_KEY = 'sk-real-provider-key-0123456789';
const ALICE = 'alice-broker-token-abcdef';
const BOB = 'bob-broker-token-abcdef';
const MB = 1024 * 1024;

let api: FakeModelApi;
let t: TestProxy;
let anthropicKey: string | undefined = REAL_KEY;
const replies: string[] = [];

beforeAll(async () => {
  const cert = selfSignedCert(['api.anthropic.test', 'api.openai.test']);
  api = await startFakeModelApi({ key: REAL_KEY, cert: cert.cert, keyPem: cert.key });
  const routes = new Map([['api.anthropic.test:443', api.port], ['api.openai.test:443', api.port], ['impostor.test:443', api.port]]);
  t = await startProxy(routes, { connectTimeoutMs: 5_000, idleTimeoutMs: 30_000 }, {
    upstreamCa: cert.cert,
    brokers: {
      anthropic: { upstream: 'https://api.anthropic.test', auth: 'x-api-key', key: () => anthropicKey },
      openai: { upstream: 'https://api.openai.test/v1/', auth: 'bearer', key: () => REAL_KEY },
      down: { upstream: 'https://down.test', auth: 'bearer', key: () => REAL_KEY },
      impostor: { upstream: 'https://impostor.test', auth: 'bearer', key: () => REAL_KEY }, // its certificate does not name it
      unset: { upstream: 'https://api.openai.test', auth: 'bearer', key: () => undefined },
    },
  });
  t.sessions.add('alice', ALICE, [], ['anthropic', 'openai', 'down', 'unset', 'impostor']);
  t.sessions.add('bob', BOB, ['api.openai.test'], ['anthropic']);
});

afterAll(async () => {
  await t?.proxy.close();
  await api?.close();
  // The real key never reached the agent's side or the records.
  expect(replies.join('\n')).not.toContain(REAL_KEY);
  expect(JSON.stringify(t.records.all)).not.toContain(REAL_KEY);
});

interface BrokerReply {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** An origin-form request to the proxy, as an SDK with base URL http://<proxy>/broker/<provider> sends it. */
async function broker(path: string, headers: Record<string, string>, body?: unknown): Promise<BrokerReply> {
  const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path, agent: false, headers: { 'content-type': 'application/json', ...headers } });
  req.end(body === undefined ? undefined : JSON.stringify(body));
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  let text = '';
  for await (const chunk of res) text += (chunk as Buffer).toString('utf8');
  replies.push(JSON.stringify(res.headers), text);
  return { status: res.statusCode ?? 0, headers: res.headers, body: text };
}

const lastRequest = (): FakeModelApi['requests'][number] => api.requests.at(-1)!;

describe('the credential broker', () => {
  it('forwards an Anthropic request with the real key instead of the token, and records its usage', async () => {
    const reply = await broker('/broker/anthropic/v1/messages?beta=true', { 'x-api-key': ALICE, 'anthropic-version': '2023-06-01', cookie: 'c=1', 'accept-encoding': 'gzip' }, { model: 'm', messages: [] });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toMatchObject({ content: [{ text: 'Hello world' }], usage: FAKE_USAGE.anthropic });
    const seen = lastRequest();
    expect(seen).toMatchObject({ path: '/v1/messages?beta=true', apiKey: REAL_KEY, authorization: null });
    expect(seen.headers).toMatchObject({ host: 'api.anthropic.test', 'anthropic-version': '2023-06-01', 'accept-encoding': 'identity' });
    expect(seen.headers.cookie).toBeUndefined();
    expect(JSON.stringify(seen.headers)).not.toContain(ALICE);
    const record = await t.records.next((r) => r.broker?.provider === 'anthropic' && r.status === 200);
    expect(record).toMatchObject({ sessionId: 'alice', host: 'api.anthropic.test', port: 443, method: 'POST', allowed: true, broker: { provider: 'anthropic', inputTokens: 11, outputTokens: 7 } });
    expect(record.reason).toBeUndefined();
    expect(record.bytesUp).toBeGreaterThan(0);
    expect(record.bytesDown).toBeGreaterThan(0);
  });

  it('forwards an OpenAI request (Bearer token) under the upstream base path, and records its usage', async () => {
    const reply = await broker('/broker/openai/chat/completions', { authorization: `Bearer ${ALICE}` }, { model: 'm', messages: [] });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toMatchObject({ choices: [{ message: { content: 'Hello world' } }] });
    expect(lastRequest()).toMatchObject({ path: '/v1/chat/completions', apiKey: null, authorization: `Bearer ${REAL_KEY}` });
    expect(JSON.stringify(lastRequest().headers)).not.toContain(ALICE);
    const record = await t.records.next((r) => r.broker?.provider === 'openai' && r.status === 200);
    expect(record).toMatchObject({ sessionId: 'alice', host: 'api.openai.test', broker: { inputTokens: 13, outputTokens: 5 } });
  });

  it('streams Anthropic events as they arrive: the first is read before the last is sent', async () => {
    const before = t.records.all.length;
    const release = api.holdNextStream();
    const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: '/broker/anthropic/v1/messages', agent: false, headers: { 'x-api-key': ALICE, 'content-type': 'application/json' } });
    req.end(JSON.stringify({ model: 'm', stream: true, messages: [] }));
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    expect(res.headers['content-type']).toBe('text/event-stream');
    let text = '';
    const ended = once(res, 'end');
    await new Promise<void>((resolve) =>
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (text.includes('"text":"Hello"')) resolve(); // the first text event, while the API holds the rest
      }),
    );
    expect(text).not.toContain('message_stop');
    release();
    await ended;
    expect(text).toContain('event: message_stop');
    const record = await t.records.next((r) => t.records.all.indexOf(r) >= before);
    expect(record.broker).toEqual({ provider: 'anthropic', inputTokens: 11, outputTokens: 7 });
  });

  it('records the usage of a streamed OpenAI reply (its final usage chunk)', async () => {
    const before = t.records.all.length;
    const reply = await broker('/broker/openai/chat/completions', { authorization: `Bearer ${ALICE}` }, { model: 'm', stream: true, stream_options: { include_usage: true }, messages: [] });
    expect(reply.body).toContain('data: [DONE]');
    const record = await t.records.next((r) => t.records.all.indexOf(r) >= before && r.broker?.provider === 'openai');
    expect(record.broker).toEqual({ provider: 'openai', inputTokens: 13, outputTokens: 5 });
  });

  it('refuses without a token, with an unknown one, for an unknown or forbidden provider and without a key', async () => {
    const cases: [string, Record<string, string>, number, string][] = [
      ['/broker/anthropic/v1/messages', {}, 401, 'no_credential'],
      ['/broker/anthropic/v1/messages', { 'x-api-key': 'not-a-session-token' }, 401, 'bad_credential'],
      ['/broker/nope/v1/messages', { 'x-api-key': ALICE }, 404, 'unknown_provider'],
      ['/broker/openai/chat/completions', { authorization: `Bearer ${BOB}` }, 403, 'provider_not_allowed'],
      ['/broker/unset/chat/completions', { authorization: `Bearer ${ALICE}` }, 503, 'provider_unconfigured'],
    ];
    for (const [path, headers, status, reason] of cases) {
      const before = t.records.all.length;
      const reply = await broker(path, headers, { model: 'm' });
      expect(reply.status, path).toBe(status);
      expect(reply.headers['content-type']).toBe('application/json');
      const record = await t.records.next((r) => t.records.all.indexOf(r) >= before);
      expect(record, path).toMatchObject({ allowed: false, reason, status });
    }
    const anthropic = await broker('/broker/anthropic/v1/messages', { 'x-api-key': 'nope' });
    expect(JSON.parse(anthropic.body)).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'berth broker: the API key (session token) is not accepted' } });
    const openai = await broker('/broker/openai/chat/completions', { authorization: `Bearer ${BOB}` });
    expect(JSON.parse(openai.body)).toMatchObject({ error: { type: 'invalid_request_error', code: 'provider_not_allowed' } });
  });

  it('refuses a revoked session, and relays the API refusing a wrong key', async () => {
    t.sessions.add('carol', 'carol-broker-token', [], ['anthropic']);
    expect((await broker('/broker/anthropic/v1/messages', { 'x-api-key': 'carol-broker-token' }, {})).status).toBe(200);
    t.sessions.revoke('carol');
    expect((await broker('/broker/anthropic/v1/messages', { 'x-api-key': 'carol-broker-token' }, {})).status).toBe(401);
    anthropicKey = 'sk-wrong-key';
    try {
      const reply = await broker('/broker/anthropic/v1/messages', { 'x-api-key': ALICE }, {});
      expect(reply.status).toBe(401);
      expect(JSON.parse(reply.body)).toMatchObject({ error: { type: 'authentication_error' } });
    } finally {
      anthropicKey = REAL_KEY;
    }
  });

  it('answers 502 when the upstream is unreachable or its certificate does not name it (no key sent)', async () => {
    const before = t.records.all.length;
    const reply = await broker('/broker/down/v1/x', { authorization: `Bearer ${ALICE}` }, {});
    expect(reply.status).toBe(502);
    const record = await t.records.next((r) => t.records.all.indexOf(r) >= before);
    expect(record).toMatchObject({ sessionId: 'alice', host: 'down.test', allowed: true, reason: 'upstream_unreachable', status: 502, broker: { provider: 'down', inputTokens: null, outputTokens: null } });
    const seen = api.requests.length;
    expect((await broker('/broker/impostor/v1/chat/completions', { authorization: `Bearer ${ALICE}` }, {})).status).toBe(502);
    expect(api.requests.length).toBe(seen);
  });

  it('streams a 64 MB upload with the proxy buffers bounded', async () => {
    const size = 64 * MB;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let maxBuffered = 0;
    const sampler = setInterval(() => (maxBuffered = Math.max(maxBuffered, t.proxy.stats().bufferedBytes)), 1);
    try {
      const req = request({ host: '127.0.0.1', port: t.port, method: 'POST', path: '/broker/anthropic/v1/messages', agent: false, headers: { 'x-api-key': ALICE, 'content-type': 'application/octet-stream' } });
      Readable.from((function* () {
        for (let sent = 0; sent < size; sent += chunk.length) yield chunk;
      })()).pipe(req);
      const [res] = (await once(req, 'response')) as [IncomingMessage];
      res.resume();
      await once(res, 'end');
      expect(res.statusCode).toBe(200);
    } finally {
      clearInterval(sampler);
    }
    expect(lastRequest().bytes).toBe(size);
    expect(maxBuffered).toBeGreaterThan(0);
    expect(maxBuffered).toBeLessThan(1 * MB);
    console.log(`broker upload: max proxy buffer ${String(maxBuffered)} bytes over a ${String(size)}-byte body`);
  });

  it('keeps refusing other origin-form requests as before', async () => {
    const plain = async (headers: Record<string, string>): Promise<[number, string]> => {
      const req = request({ host: '127.0.0.1', port: t.port, path: '/v1/messages', agent: false, headers });
      req.end();
      const [res] = (await once(req, 'response')) as [IncomingMessage];
      let text = '';
      for await (const chunk of res) text += (chunk as Buffer).toString('utf8');
      return [res.statusCode ?? 0, text];
    };
    expect((await plain({}))[0]).toBe(407);
    expect(await plain({ 'proxy-authorization': `Bearer ${ALICE}` })).toEqual([400, 'a proxy request needs an absolute http:// URI\n']);
  });
});
