import { describe, expect, it } from 'vitest';
import type { EgressPage, EgressRecordView, SessionView } from '../../api/index.js';
import { egressSummaryText, formatBytes, renderStatus } from '../output.js';
import { renderEgress } from './egress.js';

const record = (over: Partial<EgressRecordView> = {}): EgressRecordView => ({
  seq: 1,
  host: 'registry.npmjs.org',
  port: 443,
  method: 'CONNECT',
  allowed: true,
  reason: null,
  status: null,
  bytesUp: 2_000,
  bytesDown: 3_100_000,
  startedAt: '2026-12-04T10:00:00.123Z',
  endedAt: '2026-12-04T10:00:02.000Z',
  broker: null,
  inputTokens: null,
  outputTokens: null,
  ...over,
});

const page: EgressPage = {
  summary: { connections: 12, denied: 2, bytesUp: 20_000, bytesDown: 3_100_000, lastAt: '2026-12-04T10:00:09.000Z', brokerRequests: 4, inputTokens: 1234, outputTokens: 567 },
  records: [
    record(),
    record({ seq: 2, host: 'evil.example', allowed: false, reason: 'host not allowed', bytesUp: 0, bytesDown: 0 }),
    record({ seq: 3, host: 'api.anthropic.com', method: 'POST', status: 200, broker: 'anthropic', inputTokens: 1234, outputTokens: 567, bytesUp: 900, bytesDown: 4_500 }),
  ],
};

describe('berth egress', () => {
  it('lists each connection (time, verdict with the reason, method, host:port, status, bytes, broker tokens), then the summary', () => {
    const out = renderEgress('s-1', page);
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/^TIME\s+VERDICT\s+METHOD\s+HOST:PORT\s+STATUS\s+UP\s+DOWN\s+BROKER IN\/OUT$/);
    expect(lines[1]).toMatch(/^2026-12-04T10:00:00Z\s+allowed\s+CONNECT\s+registry\.npmjs\.org:443\s+-\s+2\.0 kB\s+3\.1 MB\s+-$/);
    expect(lines[2]).toMatch(/denied: host not allowed\s+CONNECT\s+evil\.example:443\s+-\s+0 B\s+0 B/);
    expect(lines[3]).toMatch(/allowed\s+POST\s+api\.anthropic\.com:443\s+200\s+900 B\s+4\.5 kB\s+anthropic 1,234\/567$/);
    expect(out).toContain('\n12 connections (2 denied), 3.1 MB down / 20 kB up; broker: 4 requests, 1,234 in / 567 out tokens (the latest 3 shown)\n');
  });

  it('says why there is nothing for a session without network:', () => {
    expect(renderEgress('s-1', { summary: { ...page.summary, connections: 0, denied: 0, brokerRequests: 0 }, records: [] })).toMatch(/^no egress recorded for s-1 \(only sessions whose profile has network:/);
  });

  it('writes bytes in SI units and leaves the broker out when it was not used', () => {
    expect([0, 999, 1000, 20_000, 3_149_999, 12_500_000].map(formatBytes)).toEqual(['0 B', '999 B', '1.0 kB', '20 kB', '3.1 MB', '13 MB']);
    expect(egressSummaryText({ ...page.summary, connections: 1, denied: 0, brokerRequests: 0 })).toBe('1 connection, 3.1 MB down / 20 kB up');
  });
});

describe('berth status with egress', () => {
  const view: SessionView = {
    id: 's-1',
    name: null,
    executor: 'local',
    agent: 'demo',
    repository: { path: '/src/app' },
    state: 'ready',
    createdAt: '2026-12-04T09:00:00.000Z',
    updatedAt: '2026-12-04T09:00:00.000Z',
    stages: [],
    workspacePath: null,
    error: null,
    agentProcess: null,
  };
  const now = new Date('2026-12-04T10:00:00.000Z');

  it('shows an Egress line when the session made connections, none otherwise', () => {
    expect(renderStatus(view, 'table', now, page.summary)).toContain('\nEgress:     12 connections (2 denied), 3.1 MB down / 20 kB up; broker: 4 requests, 1,234 in / 567 out tokens (berth egress s-1)\n');
    expect(renderStatus(view, 'table', now, { ...page.summary, connections: 0 })).not.toContain('Egress');
    expect(renderStatus(view, 'table', now)).not.toContain('Egress');
  });
});
