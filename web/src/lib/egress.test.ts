import { describe, expect, it } from 'vitest';
import type { EgressRecordView, EgressSummaryView } from '../../../src/api/index.js';
import { brokerLabel, egressSummaryLabel, egressVerdict, formatBytes } from './egress.js';

const record: EgressRecordView = {
  seq: 7,
  host: 'api.example.test',
  port: 443,
  method: 'CONNECT',
  allowed: true,
  reason: null,
  status: null,
  bytesUp: 120,
  bytesDown: 3_100_000,
  startedAt: '2026-12-04T10:00:00.000Z',
  endedAt: '2026-12-04T10:00:01.000Z',
  broker: null,
  inputTokens: null,
  outputTokens: null,
};

const summary: EgressSummaryView = { connections: 12, denied: 2, bytesUp: 20_000, bytesDown: 3_100_000, lastAt: '2026-12-04T10:00:01.000Z', brokerRequests: 4, inputTokens: 1234, outputTokens: 567 };

describe('egress display', () => {
  it('writes bytes in SI units', () => {
    expect([0, 999, 1000, 20_000, 3_149_999, 12_500_000].map(formatBytes)).toEqual(['0 B', '999 B', '1.0 kB', '20 kB', '3.1 MB', '13 MB']);
  });

  it('sums up connections, denied ones, bytes and the broker', () => {
    expect(egressSummaryLabel(summary)).toBe('12 connections (2 denied) · 3.1 MB down / 20 kB up · broker: 4 requests, 1,234 in / 567 out tokens');
    expect(egressSummaryLabel({ ...summary, connections: 1, denied: 0, brokerRequests: 0 })).toBe('1 connection · 3.1 MB down / 20 kB up');
  });

  it('tells allowed from denied, with the reason', () => {
    expect(egressVerdict(record)).toBe('allowed');
    expect(egressVerdict({ ...record, allowed: false, reason: 'host not allowed' })).toBe('denied: host not allowed');
  });

  it('names the broker and its tokens', () => {
    expect(brokerLabel(record)).toBe('');
    expect(brokerLabel({ ...record, broker: 'anthropic', inputTokens: 1234, outputTokens: 56 })).toBe('anthropic · 1,234 in / 56 out');
  });
});
