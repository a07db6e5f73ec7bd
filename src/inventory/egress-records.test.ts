import { describe, expect, it } from 'vitest';
import { egressBatch, egressCredentialRow, egressListBounds, egressRecordFromRow, egressSummaryFromRow, type EgressRecordDbRow } from './egress-records.js';
import { InventoryCorruptError } from './errors.js';
import type { EgressRecordInput } from './inventory.js';

const input: EgressRecordInput = {
  sessionId: 's-1',
  host: 'a.test',
  port: 443,
  method: 'CONNECT',
  allowed: true,
  reason: null,
  status: null,
  bytesUp: 1,
  bytesDown: 2,
  startedAt: 10,
  endedAt: 20,
  broker: null,
  inputTokens: null,
  outputTokens: null,
};

describe('egress records', () => {
  it('checks every field of a batch before anything is stored, and lists its sessions once', () => {
    expect(egressBatch([input, { ...input, sessionId: 's-0' }, input]).sessionIds).toEqual(['s-0', 's-1']);
    const bad: Partial<EgressRecordInput>[] = [
      { sessionId: '' },
      { port: -1 },
      { port: 1.5 },
      { method: '' },
      { status: 1000 },
      { bytesDown: Number.NaN },
      { startedAt: -5 },
      { broker: '' },
      { outputTokens: 0.5 },
      { reason: 3 as unknown as string },
    ];
    for (const b of bad) expect(() => egressBatch([input, { ...input, ...b }]), JSON.stringify(b)).toThrow(TypeError);
    expect(egressBatch([{ ...input, status: 0, broker: 'anthropic', inputTokens: 0 }]).rows[0]).toMatchObject({ status: 0, broker: 'anthropic', input_tokens: 0, allowed: 1 });
  });

  it('stores only a lowercase sha256 hex digest and a string policy', () => {
    const now = new Date('2026-01-01T00:00:00.000Z');
    const digest = 'ab'.repeat(32);
    expect(egressCredentialRow({ sessionId: 's', tokenDigest: digest, policy: '{}' }, now)).toEqual({ session_id: 's', token_digest: digest, policy: '{}', created_at: now.toISOString() });
    for (const tokenDigest of ['AB'.repeat(32), 'ab'.repeat(31), 'a-raw-token']) {
      expect(() => egressCredentialRow({ sessionId: 's', tokenDigest, policy: '{}' }, now)).toThrow(TypeError);
    }
    expect(() => egressCredentialRow({ sessionId: 's', tokenDigest: digest, policy: {} as unknown as string }, now)).toThrow(TypeError);
  });

  it('bounds a listing: after from 0, limit 1 to 10 000 (1000 by default)', () => {
    expect(egressListBounds('s', {})).toEqual({ after: 0, limit: 1000 });
    expect(egressListBounds('s', { after: 7, limit: 10_000 })).toEqual({ after: 7, limit: 10_000 });
    for (const opts of [{ limit: 0 }, { limit: 10_001 }, { after: -1 }, { after: 0.5 }]) expect(() => egressListBounds('s', opts)).toThrow(TypeError);
    expect(() => egressListBounds('', {})).toThrow(TypeError);
  });

  it('reads Postgres BIGINT strings as numbers, and refuses a value that is not an integer', () => {
    const row: EgressRecordDbRow = { seq: '42', session_id: 's', host: 'h', port: 80, method: 'GET', allowed: 0, reason: 'no', status: 403, bytes_up: '9007199254740991', bytes_down: '0', started_at: '1', ended_at: '2', broker: null, input_tokens: null, output_tokens: '3' };
    expect(egressRecordFromRow(row)).toMatchObject({ seq: 42, allowed: false, bytesUp: Number.MAX_SAFE_INTEGER, outputTokens: 3, inputTokens: null });
    expect(() => egressRecordFromRow({ ...row, bytes_up: 'x' })).toThrow(InventoryCorruptError);
    expect(egressSummaryFromRow({ connections: '0', denied: null, bytes_up: null, bytes_down: null, last_at: null, broker_requests: null, input_tokens: null, output_tokens: null }, 's')).toEqual({
      connections: 0,
      denied: 0,
      bytesUp: 0,
      bytesDown: 0,
      lastAt: null,
      brokerRequests: 0,
      inputTokens: 0,
      outputTokens: 0,
    });
  });
});
