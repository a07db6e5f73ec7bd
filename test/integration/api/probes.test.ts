import { existsSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Readiness } from '../../../src/server/health.js';
import { ServerMetrics } from '../../../src/server/metrics.js';
import { startServe, type ServeHandle } from '../../../src/server/serve.js';
import { createApiServer } from '../../../src/server/server.js';
import { FakeSessions } from '../../support/fake-sessions.js';
import { tempDir } from '../cli/helpers.js';

/** A GET with an explicit Host header (fetch does not let a test set it). */
function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; type: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: res.headers['content-type'] }));
    });
    req.once('error', reject);
    req.end();
  });
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('berth serve: /healthz, /readyz and /metrics', () => {
  it('answers the probes while the controller starts (not ready, no serve.json), and is ready once it has started', async () => {
    const dataDir = tempDir('berth-probes-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    let started: (s: FakeSessions) => void = () => undefined;
    const service = new Promise<FakeSessions>((resolve) => (started = resolve));
    let listening: (port: number) => void = () => undefined;
    const bound = new Promise<number>((resolve) => (listening = resolve));
    const readiness = new Readiness();
    const serving = startServe({ dataDir, port: 0, version: 'test', createService: () => service, readiness, onListening: (p) => listening(p) });
    const port = await bound;

    expect(await get(port, '/healthz')).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    const notReady = await get(port, '/readyz');
    expect(notReady.status).toBe(503);
    expect(JSON.parse(notReady.body)).toEqual({ status: 'not_ready', reason: 'starting', message: expect.stringContaining('recovering') });
    expect((await get(port, '/metrics')).body).toMatch(/^berth_ready 0$/m);
    // the API routes wait for the controller; the CLI finds no server until it is ready
    const token = readFileSync(join(dataDir, 'state', 'api-token'), 'utf8').trim();
    const early = await get(port, '/api/v1/sessions', { authorization: `Bearer ${token}` });
    expect(early.status).toBe(503);
    expect(JSON.parse(early.body)).toEqual({ error: { code: 'internal', message: expect.stringContaining('not ready') } });
    expect(existsSync(join(dataDir, 'serve.json'))).toBe(false);

    started(new FakeSessions());
    const handle: ServeHandle = await serving;
    cleanups.push(() => handle.close());
    expect(handle.port).toBe(port);
    expect(await get(port, '/readyz')).toMatchObject({ status: 200, body: '{"status":"ready"}' });
    expect((await get(port, '/api/v1/sessions', { authorization: `Bearer ${token}` })).status).toBe(200);
    expect(existsSync(join(dataDir, 'serve.json'))).toBe(true);
    expect((await get(port, '/metrics')).body).toMatch(/^berth_ready 1$/m);

    // the seam for leader election: a standby answers 503 so a Service sends nobody to it
    readiness.markNotReady('standby');
    expect(JSON.parse((await get(port, '/readyz')).body)).toMatchObject({ status: 'not_ready', reason: 'standby' });
  });

  it('answers the probes and /metrics under any Host (a kubelet names the Pod IP) but keeps the Host check elsewhere', async () => {
    const dataDir = tempDir('berth-probes-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const handle = await startServe({ dataDir, port: 0, version: 'test', createService: async () => new FakeSessions() });
    cleanups.push(() => handle.close());
    const host = { host: `10.1.2.3:${handle.port}` };
    expect((await get(handle.port, '/healthz', host)).status).toBe(200);
    expect((await get(handle.port, '/readyz', host)).status).toBe(200);
    const metrics = await get(handle.port, '/metrics', host);
    expect(metrics.status).toBe(200);
    expect(metrics.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect((await get(handle.port, '/health', host)).status).toBe(403);
  });

  it('requires the token (and the Host check) on /metrics when told to', async () => {
    const metrics = new ServerMetrics({ targets: [], version: 'test', defaultMetrics: false });
    const server = createApiServer({ service: new FakeSessions(), token: 'secret-token', version: 'test', metrics, metricsAuth: true });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    expect((await get(port, '/metrics')).status).toBe(401);
    expect((await get(port, '/metrics', { host: `10.1.2.3:${port}`, authorization: 'Bearer secret-token' })).status).toBe(403);
    const ok = await get(port, '/metrics', { authorization: 'Bearer secret-token' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatch(/^berth_http_request_duration_seconds_count\{operation="metrics",status_class="4xx"\} 2$/m);
    // a server with no readiness of its own is ready once its service is there
    expect((await get(port, '/readyz')).status).toBe(200);
  });
});
