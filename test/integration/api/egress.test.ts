/**
 * A session's egress records (issue 23) through the real HTTP API against a real controller
 * (SQLite data dir, `startServe` in-process) and through `berth egress`/`berth status`: records are
 * written straight into the inventory (as the egress proxy does), then read back in order with
 * `after`/`limit`/`tail`, with the summary; an unknown session is 404, a bad bound 400.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BerthClient } from '../../../src/api/api-client.js';
import { BerthApiError } from '../../../src/api/errors.js';
import { createController } from '../../../src/controller/index.js';
import type { EgressRecordInput } from '../../../src/inventory/inventory.js';
import { InventoryStore } from '../../../src/inventory/store.js';
import { discoverServer } from '../../../src/server/data-dir.js';
import { startServe, type ServeHandle } from '../../../src/server/serve.js';
import { ensureBuilt, runCli } from '../cli/helpers.js';
import { agentctlBundle, cleanup, tempDir, testConfig } from '../sessions/helpers.js';

const T0 = Date.parse('2026-12-04T10:00:00.000Z');

function record(i: number, extra: Partial<EgressRecordInput> = {}): EgressRecordInput {
  return {
    sessionId: 'egress-s1',
    host: `h${i}.example.test`,
    port: 443,
    method: 'CONNECT',
    allowed: true,
    reason: null,
    status: null,
    bytesUp: 100,
    bytesDown: 1000,
    startedAt: T0 + i * 1000,
    endedAt: T0 + i * 1000 + 500,
    broker: null,
    inputTokens: null,
    outputTokens: null,
    ...extra,
  };
}

describe('egress records over the API and the CLI', () => {
  let root: string;
  let dataDir: string;
  let handle: ServeHandle;
  let client: BerthClient;
  let base: string;
  let token: string;
  let store: InventoryStore;

  beforeAll(async () => {
    ensureBuilt();
    root = tempDir('egress-api');
    dataDir = join(root, 'data');
    const agentctlPath = agentctlBundle(root);
    handle = await startServe({
      dataDir,
      port: 0,
      version: 'test',
      createService: async () => {
        const c = await createController({ dataDir, agentctlPath, config: testConfig(), env: {} });
        await c.recover();
        return c;
      },
    });
    const found = discoverServer(dataDir);
    if (!found) throw new Error('serve.json not written');
    ({ baseUrl: base, token } = found);
    client = new BerthClient({ baseUrl: base, token });
    // the controller is up (recovered): a second connection to its SQLite inventory writes what the proxy would
    store = InventoryStore.open({ dataDir });
    const session = {
      executor: 'local',
      agent: 'demo',
      repository: { path: '/r' },
      request: { env: {}, secretEnv: [], prompt: null, agentCommand: ['x'], agentEnv: {}, profileEnv: {} },
      state: 'stopped',
      error: null,
      stages: [],
      workspacePath: null,
    };
    await store.insertSession({ id: 'egress-s1', name: 'netty', ...session });
    await store.insertSession({ id: 'egress-s2', name: null, ...session });
    await store.appendEgressRecords([
      record(1),
      record(2, { host: 'evil.example.test', allowed: false, reason: 'host not allowed', bytesUp: 0, bytesDown: 0 }),
      record(3, { host: 'api.anthropic.com', method: 'POST', status: 200, broker: 'anthropic', inputTokens: 1200, outputTokens: 34, bytesUp: 5000, bytesDown: 2_000_000 }),
      record(4),
      record(5, { allowed: false, reason: 'port not allowed', port: 22, bytesUp: 0, bytesDown: 0 }),
    ]);
  });

  afterAll(async () => {
    await store?.close();
    await handle?.close();
    cleanup(root);
  });

  it('lists the records in order, pages with after/limit, reads the latest with tail, and sums them up', async () => {
    const all = await client.egress.get('egress-s1');
    expect(all.records.map((r) => r.host)).toEqual(['h1.example.test', 'evil.example.test', 'api.anthropic.com', 'h4.example.test', 'h5.example.test']);
    const seqs = all.records.map((r) => r.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(all.records[1]).toEqual({
      seq: seqs[1],
      host: 'evil.example.test',
      port: 443,
      method: 'CONNECT',
      allowed: false,
      reason: 'host not allowed',
      status: null,
      bytesUp: 0,
      bytesDown: 0,
      startedAt: '2026-12-04T10:00:02.000Z',
      endedAt: '2026-12-04T10:00:02.500Z',
      broker: null,
      inputTokens: null,
      outputTokens: null,
    });
    expect(all.summary).toEqual({ connections: 5, denied: 2, bytesUp: 5200, bytesDown: 2_002_000, lastAt: '2026-12-04T10:00:05.500Z', brokerRequests: 1, inputTokens: 1200, outputTokens: 34 });

    const page = await client.egress.get('netty', { after: seqs[0], limit: 2 });
    expect(page.records.map((r) => r.seq)).toEqual(seqs.slice(1, 3));
    expect((await client.egress.get('egress-s1', { after: seqs[4] })).records).toEqual([]);
    expect((await client.egress.get('egress-s1', { tail: 2 })).records.map((r) => r.seq)).toEqual(seqs.slice(3));
    const summaryOnly = await client.egress.get('egress-s1', { limit: 0 });
    expect(summaryOnly).toEqual({ summary: all.summary, records: [] });

    const none = await client.egress.get('egress-s2');
    expect(none).toEqual({ summary: { connections: 0, denied: 0, bytesUp: 0, bytesDown: 0, lastAt: null, brokerRequests: 0, inputTokens: 0, outputTokens: 0 }, records: [] });
  });

  it('answers 404 for an unknown session and 400 naming a bad bound', async () => {
    await expect(client.egress.get('nope')).rejects.toMatchObject({ status: 404, code: 'not_found' });
    const bad = await client.egress.get('egress-s1', { limit: 10_001 }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BerthApiError);
    expect(bad).toMatchObject({ status: 400, code: 'bad_request', field: 'limit' });
    const res = await fetch(`${base}/api/v1/sessions/egress-s1/egress?after=-1`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(400);
    await expect(client.egress.get('egress-s1', { tail: 2, after: 1 })).rejects.toMatchObject({ status: 400, field: 'tail' });
  });

  it('berth egress -o json prints {summary, records}; the table ends with the summary; status shows it', async () => {
    const json = await runCli(['egress', '-o', 'json', 'netty'], { dataDir });
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    const out = JSON.parse(json.stdout) as { summary: { connections: number; denied: number }; records: { host: string; allowed: boolean }[] };
    expect(Object.keys(out)).toEqual(['summary', 'records']);
    expect(out.summary).toMatchObject({ connections: 5, denied: 2 });
    expect(out.records.map((r) => r.allowed)).toEqual([true, false, true, true, false]);

    const table = await runCli(['egress', '--limit', '2', 'egress-s1'], { dataDir });
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TIME\s+VERDICT/);
    expect(lines[1]).toMatch(/h4\.example\.test:443/);
    expect(lines[2]).toMatch(/denied: port not allowed\s+CONNECT\s+h5\.example\.test:22/);
    expect(lines.at(-1)).toBe('5 connections (2 denied), 2.0 MB down / 5.2 kB up; broker: 1 request, 1,200 in / 34 out tokens (the latest 2 shown)');

    const status = await runCli(['status', 'netty'], { dataDir });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^Egress: +5 connections \(2 denied\), 2\.0 MB down \/ 5\.2 kB up; broker: 1 request, 1,200 in \/ 34 out tokens \(berth egress egress-s1\)$/m);
    expect((await runCli(['status', 'egress-s2'], { dataDir })).stdout).not.toContain('Egress');

    const missing = await runCli(['egress', 'nope'], { dataDir });
    expect(missing.code).toBe(3);
  });
});
