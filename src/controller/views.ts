/**
 * Pure mapping from inventory records (plus the live entry) to the SessionView of the service.
 * @module
 */
import type { SessionState, SessionView } from '../api/index.js';
import type { SessionRecord } from '../inventory/index.js';
import type { LiveSession } from './live.js';
import { redactRepositoryUrl } from './repo-credentials.js';

const STATES: readonly SessionState[] = ['launching', 'ready', 'stopping', 'stopped', 'suspended', 'failed', 'removing'];

function toSessionState(raw: string): SessionState {
  return (STATES as readonly string[]).includes(raw) ? (raw as SessionState) : 'failed';
}

export function toView(record: SessionRecord, live: LiveSession | undefined): SessionView {
  return {
    id: record.id,
    name: record.name,
    executor: record.executor,
    agent: record.agent,
    repository: { ...record.repository, ...(record.repository.url !== undefined ? { url: redactRepositoryUrl(record.repository.url) } : {}) },
    state: toSessionState(record.state),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    stages: record.stages.map((s) => ({ ...s })),
    workspacePath: record.workspacePath,
    error: record.error === null ? null : { ...record.error },
    agentProcess: live?.agent ?? (live?.agentProcessId ? { id: live.agentProcessId, status: 'running', exitCode: null } : null),
    protocol: record.request.protocol === 'acp' ? 'acp' : 'raw',
  };
}
