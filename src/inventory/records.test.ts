import { describe, expect, it } from 'vitest';
import { InventoryCorruptError } from './errors.js';
import {
  filterPersistentMetadata,
  isProvisionalState,
  nextTimestamp,
  runtimeFromRow,
  runtimeToRow,
  sessionFromRow,
  sessionToRow,
  type RuntimeRecord,
  type SessionRecord,
} from './records.js';

const session: SessionRecord = {
  id: 's-1',
  name: 'demo',
  executor: 'local',
  agent: 'demo',
  repository: { path: '/tmp/repo', branch: 'main' },
  request: { env: { A: '1' }, secretEnv: ['GH_TOKEN'], prompt: 'do it', agentCommand: ['node', 'a.mjs'], agentEnv: {}, profileEnv: {} },
  state: 'ready',
  error: null,
  stages: [{ name: 'workspace', status: 'succeeded', startedAt: 'a', endedAt: 'b', durationMs: 3, reason: null, message: null }],
  workspacePath: '/data/workspaces/s-1/repo',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

const runtime: RuntimeRecord = {
  sessionId: 's-1',
  instanceId: 'i-1',
  executor: 'local',
  state: 'agentctl_started',
  metadata: { local_agentctl_pid: '42', env_secret_id_AGENTCTL_AUTH_TOKEN: 'agentctl-auth-x' },
  stages: [],
  secretRefs: { AGENTCTL_AUTH_TOKEN: 'agentctl-auth-x' },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

describe('records', () => {
  it('round-trips a session through its row', () => {
    expect(sessionFromRow(sessionToRow(session))).toEqual(session);
  });

  it('round-trips a runtime record through its row', () => {
    expect(runtimeFromRow(runtimeToRow(runtime))).toEqual(runtime);
  });

  it('rejects an unreadable JSON column with the table, key and column', () => {
    const row = { ...sessionToRow(session), stages: '{not json' };
    expect(() => sessionFromRow(row)).toThrow(InventoryCorruptError);
    expect(() => sessionFromRow(row)).toThrow("sessions row 's-1' is unreadable: stages: not JSON");
  });

  it('rejects a JSON column of the wrong shape', () => {
    const row = { ...sessionToRow(session), repository: '{"url": 5}' };
    expect(() => sessionFromRow(row)).toThrow(/repository\.url/);
  });

  it('never writes a raw secret that slipped into the metadata', () => {
    const row = runtimeToRow({
      ...runtime,
      metadata: {
        ...runtime.metadata,
        AGENTCTL_AUTH_TOKEN: 'tok-raw-secret-value',
        local_auth_token: 'tok-raw-secret-value',
        local_bootstrap_nonce: 'tok-raw-secret-value',
        unknown_key: 'tok-raw-secret-value',
      },
    });
    expect(row.metadata).not.toContain('tok-raw-secret-value');
    expect(JSON.parse(row.metadata)).toEqual(runtime.metadata);
  });
});

describe('filterPersistentMetadata', () => {
  it.each([
    ['local_agentctl_pid', '1', true],
    ['kubernetes_pod_name', 'p', true],
    ['env_secret_id_AGENTCTL_AUTH_TOKEN', 'id', true],
    ['inventory_state', 'ready', true],
    ['agentctl_instance_id', 'i', true],
    ['AGENTCTL_AUTH_TOKEN', 'raw', false],
    ['local_auth_token', 'raw', false],
    ['kubernetes_bootstrap_nonce', 'raw', false],
    ['local_password', 'raw', false],
    ['env_secret_id_lowercase', 'id', false],
    ['random', 'x', false],
  ])('%s kept=%s', (key, value, kept) => {
    expect(key in filterPersistentMetadata({ [key]: value })).toBe(kept);
  });

  it('drops non-string values', () => {
    expect(filterPersistentMetadata({ local_agentctl_pid: 42 })).toEqual({});
  });
});

describe('isProvisionalState', () => {
  it.each([
    ['workspace_created', true],
    ['agentctl_started', true],
    ['ready', false],
    ['stopped', false],
    ['failed', false],
  ])('%s → %s', (state, provisional) => {
    expect(isProvisionalState(state)).toBe(provisional);
  });
});

describe('nextTimestamp', () => {
  it('is strictly after the previous value even when the clock has not moved', () => {
    const now = new Date('2026-01-01T00:00:00.000Z');
    expect(nextTimestamp('2026-01-01T00:00:00.000Z', now)).toBe('2026-01-01T00:00:00.001Z');
    expect(nextTimestamp(null, now)).toBe('2026-01-01T00:00:00.000Z');
    expect(nextTimestamp('2025-01-01T00:00:00.000Z', now)).toBe('2026-01-01T00:00:00.000Z');
  });
});
