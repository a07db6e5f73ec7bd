/**
 * The events stream (`GET /api/v1/events`) of an in-process API server to a client that stops
 * reading: past its bound the stream is cut (the client re-subscribes and gets a fresh snapshot)
 * instead of every event being buffered for it.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../src/controller/service.js';
import { createApiServer, type ApiService } from '../../../src/server/server.js';

const TOKEN = 't'.repeat(43);

describe('the events stream with a client that reads nothing', () => {
  const listeners = new Set<(e: SessionEvent) => void>();
  const service = {
    list: async () => [],
    subscribe: (l: (e: SessionEvent) => void) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  } as unknown as ApiService;
  const server = createApiServer({ service, token: TOKEN, version: 'test' });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('cuts the stream once megabytes of events wait unread, and stops buffering for it', async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    const sock = connect(port, '127.0.0.1');
    sock.on('error', () => undefined);
    await once(sock, 'connect');
    sock.pause();
    sock.write(`GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    for (let i = 0; i < 200 && listeners.size === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(listeners.size, 'the stream subscribed').toBe(1);
    const message = 'm'.repeat(64 << 10);
    let sent = 0;
    // 64 MiB of events at most: far past the bound, and what the server would hold without one.
    for (let i = 0; i < 1024 && listeners.size > 0; i++, sent++) {
      for (const l of listeners) l({ type: 'diagnostic', sessionId: 's1', reason: 'test', message, at: new Date().toISOString() });
      await new Promise((r) => setImmediate(r));
    }
    expect(listeners.size, `the stream was cut (after ${sent} events of 64 KiB)`).toBe(0);
    expect(sent).toBeLessThan(1024);
    sock.destroy();
  });
});
