import { describe, expect, it } from 'vitest';
import { persistentMetadata } from '../../src/inventory/records.js';
import { LocalExecutor } from '../../src/executors/local/executor.js';
import { decodeLocalMetadata, encodeLocalMetadata, LocalMetadataError, type LocalMetadata } from '../../src/executors/local/metadata.js';

const full: LocalMetadata = {
  instanceId: 'i-1',
  sessionDir: '/d/workspaces/s-1',
  workspacePath: '/d/workspaces/s-1/repo',
  workspaceCreated: true,
  launchKind: 'fresh',
  agentctlPath: '/opt/berth/dist/agentctl.cjs',
  agentctlPid: 4242,
  agentctlProcStart: '123456',
  controlPort: 40001,
  instancePort: 40002,
};

describe('local metadata', () => {
  it('round-trips through the string map', () => {
    expect(decodeLocalMetadata(encodeLocalMetadata(full, 'agentctl_started'))).toEqual(full);
  });

  it('is entirely persistable (the inventory accepts every key)', () => {
    const encoded = encodeLocalMetadata(full, 'ready');
    expect(persistentMetadata(encoded, [LocalExecutor.capabilities.metadataKeyPrefix])).toEqual(encoded);
  });

  it('omits what is not known yet', () => {
    const early = { ...full, agentctlPid: null, agentctlProcStart: null, controlPort: null, instancePort: null };
    expect(decodeLocalMetadata(encodeLocalMetadata(early, 'workspace_created'))).toEqual(early);
  });

  it.each([
    ['agentctl_instance_id', { agentctl_instance_id: '' }],
    ['local_session_dir', { local_session_dir: '' }],
    ['local_agentctl_pid', { local_agentctl_pid: '12x' }],
  ])('rejects bad %s', (key, patch) => {
    const raw = { ...encodeLocalMetadata(full, 'ready'), ...patch };
    expect(() => decodeLocalMetadata(raw)).toThrow(LocalMetadataError);
    expect(() => decodeLocalMetadata(raw)).toThrow(key);
  });
});
