import { describe, expect, it } from 'vitest';
import { InventoryCorruptError, InventoryMetadataError } from './errors.js';
import {
  isProvisionalState,
  nextTimestamp,
  persistentMetadata,
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

/** The metadata key prefixes two executor types declare (`ExecutorCapabilities.metadataKeyPrefix`). */
const PREFIXES = ['local_', 'kubernetes_'];

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
    expect(runtimeFromRow(runtimeToRow(runtime, PREFIXES))).toEqual(runtime);
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

  it.each([
    ['AGENTCTL_AUTH_TOKEN', /looks like a secret/],
    ['local_auth_token', /looks like a secret/],
    ['local_bootstrap_nonce', /looks like a secret/],
    ['unknown_key', /is not a known metadata key/],
  ])('refuses to write metadata key %s, naming the key and never the value', (key, why) => {
    const write = () => runtimeToRow({ ...runtime, metadata: { ...runtime.metadata, [key]: 'tok-raw-secret-value' } }, PREFIXES);
    expect(write).toThrow(InventoryMetadataError);
    expect(write).toThrow(why);
    expect(write).toThrow(new RegExp(`'${key}'`));
    try {
      write();
    } catch (err) {
      expect(String(err)).not.toContain('tok-raw-secret-value');
    }
  });

  it('reads stored metadata back as written, keeping keys it does not know (never a silent loss)', () => {
    const row = { ...runtimeToRow(runtime, PREFIXES), metadata: JSON.stringify({ ...runtime.metadata, future_key: 'x' }) };
    expect(runtimeFromRow(row).metadata).toEqual({ ...runtime.metadata, future_key: 'x' });
  });
});

describe('persistentMetadata', () => {
  it.each([
    ['local_agentctl_pid', true],
    ['kubernetes_pod_name', true],
    ['env_secret_id_AGENTCTL_AUTH_TOKEN', true],
    ['inventory_state', true],
    ['agentctl_instance_id', true],
    ['AGENTCTL_AUTH_TOKEN', false],
    ['local_auth_token', false],
    ['kubernetes_bootstrap_nonce', false],
    ['local_password', false],
    ['env_secret_id_lowercase', false],
    ['random', false],
  ])('%s accepted=%s', (key, accepted) => {
    const check = () => persistentMetadata({ [key]: 'v' }, PREFIXES);
    if (accepted) expect(check()).toEqual({ [key]: 'v' });
    else expect(check).toThrow(InventoryMetadataError);
  });

  it('refuses non-string values', () => {
    expect(() => persistentMetadata({ local_agentctl_pid: 42 }, PREFIXES)).toThrow(/must be a string/);
  });

  it('accepts executor keys only under the prefixes it is given', () => {
    expect(persistentMetadata({ local_agentctl_pid: '1' }, ['local_'])).toEqual({ local_agentctl_pid: '1' });
    expect(() => persistentMetadata({ kubernetes_pod_name: 'p' }, ['local_'])).toThrow(/'kubernetes_pod_name' is not a known metadata key/);
    expect(() => persistentMetadata({ local_agentctl_pid: '1' }, [])).toThrow(InventoryMetadataError);
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
