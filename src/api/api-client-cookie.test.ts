import { describe, expect, it } from 'vitest';
import { BerthClient } from './api-client.js';

/** A fetch that records each call and answers `body` as JSON. */
function recorder(body: unknown): { fetch: typeof fetch; calls: { url: string; init: RequestInit }[] } {
  const calls: { url: string; init: RequestInit }[] = [];
  const fake = (async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  }) as unknown as typeof fetch;
  return { fetch: fake, calls };
}

const headersOf = (init: RequestInit): Record<string, string> => init.headers as Record<string, string>;

describe('BerthClient in cookie mode (the dashboard)', () => {
  it('sends no Authorization header and lets the browser send its cookie', async () => {
    const r = recorder({ sessions: [] });
    await new BerthClient({ baseUrl: 'http://127.0.0.1:7420', token: null, fetch: r.fetch }).list();
    expect(headersOf(r.calls[0]!.init)).not.toHaveProperty('authorization');
    expect(r.calls[0]!.init.credentials).toBe('same-origin');
  });

  it('remembers the CSRF token from the login and sends it on every request, GET included', async () => {
    const r = recorder({ csrf: 'tok' });
    const client = new BerthClient({ baseUrl: 'http://127.0.0.1:7420', token: null, fetch: r.fetch });
    expect(await client.dashboardLogin('the-code')).toEqual({ csrf: 'tok' });
    expect(r.calls[0]!.url).toBe('http://127.0.0.1:7420/api/v1/dashboard/login');
    expect(JSON.parse(String(r.calls[0]!.init.body))).toEqual({ code: 'the-code' });
    await client.remove('s1').catch(() => undefined);
    expect(headersOf(r.calls[1]!.init)['x-berth-csrf']).toBe('tok');
    await client.list().catch(() => undefined);
    expect(headersOf(r.calls[2]!.init)['x-berth-csrf']).toBe('tok');
  });

  it('checks the session with the CSRF token it was given, and learns none from the answer', async () => {
    const r = recorder({ loggedIn: true });
    const client = new BerthClient({ baseUrl: 'http://127.0.0.1:7420', token: null, csrf: 'kept', fetch: r.fetch });
    expect(await client.dashboardSession()).toEqual({ loggedIn: true });
    expect(r.calls[0]!.url).toBe('http://127.0.0.1:7420/api/v1/dashboard/session');
    expect(headersOf(r.calls[0]!.init)['x-berth-csrf']).toBe('kept');
  });

  it('passes the CSRF token to the shell WebSocket (header with a factory, query for the browser)', () => {
    const opened: { url: string; headers: Record<string, string> }[] = [];
    const socket = { readyState: 0, send: () => undefined, close: () => undefined, onopen: null, onmessage: null, onclose: null, onerror: null };
    const client = new BerthClient({
      baseUrl: 'http://127.0.0.1:7420',
      token: null,
      csrf: 'tok',
      webSocket: (url, headers) => {
        opened.push({ url, headers });
        return socket;
      },
    });
    void client.shell('s1', { rows: 24, cols: 80, onOutput: () => undefined }).done.catch(() => undefined);
    expect(opened[0]?.headers).toEqual({ 'x-berth-csrf': 'tok' });
    const urls: string[] = [];
    const saved = globalThis.WebSocket;
    globalThis.WebSocket = function (url: string) {
      urls.push(url);
      return { ...socket };
    } as unknown as typeof WebSocket;
    try {
      const browser = new BerthClient({ baseUrl: 'http://127.0.0.1:7420', token: null, csrf: 'tok' });
      void browser.shell('s1', { rows: 24, cols: 80, onOutput: () => undefined }).done.catch(() => undefined);
    } finally {
      globalThis.WebSocket = saved;
    }
    expect(urls).toEqual(['ws://127.0.0.1:7420/api/v1/sessions/s1/shell?rows=24&cols=80&csrf=tok']);
  });

  it('keeps the bearer header when a token is given', async () => {
    const r = recorder({ agents: ['demo'], targets: [], defaults: { agent: 'demo', executor: 'local' } });
    const options = await new BerthClient({ baseUrl: 'http://127.0.0.1:7420', token: 't', fetch: r.fetch }).launchOptions();
    expect(options.agents).toEqual(['demo']);
    expect(headersOf(r.calls[0]!.init).authorization).toBe('Bearer t');
    expect(r.calls[0]!.init.credentials).toBeUndefined();
  });
});
