import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { IDLE_SOCKET_MS } from './http-fetch.js';
import { outlastClients, SERVER_IDLE_MS } from './keep-alive.js';

describe('server keep-alive', () => {
  it('keeps an idle connection longer than Berth clients do, so the client closes first', () => {
    const server = outlastClients(createServer());
    expect(server.keepAliveTimeout).toBe(SERVER_IDLE_MS);
    expect(server.keepAliveTimeout).toBeGreaterThan(IDLE_SOCKET_MS + 1000);
  });
});
