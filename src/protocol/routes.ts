/**
 * Every route of agentctl, written once. The daemon registers these paths and the client builds
 * its URLs from them, so neither side can drift.
 * @module
 */
import { API_V1 } from './constants.js';

const enc = encodeURIComponent;

/** Control server (`127.0.0.1:$AGENTCTL_PORT`). */
export const controlRoutes = {
  health: '/health',
  handshake: '/auth/handshake',
  instances: `${API_V1}/instances`,
  instance: (id: string) => `${API_V1}/instances/${enc(id)}`,
} as const;

/** Instance server (one per instance, `127.0.0.1:<instance port>`). */
export const instanceRoutes = {
  health: '/health',
  processes: `${API_V1}/processes`,
  process: (id: string) => `${API_V1}/processes/${enc(id)}`,
  processStdin: (id: string) => `${API_V1}/processes/${enc(id)}/stdin`,
  processSignal: (id: string) => `${API_V1}/processes/${enc(id)}/signal`,
  processOutput: (id: string) => `${API_V1}/processes/${enc(id)}/output`,
  processStream: (id: string) => `${API_V1}/processes/${enc(id)}/stream`,
  /** ACP processes only (acp.ts): new turn, cancel the turn, recorded events, permission requests. */
  processPrompt: (id: string) => `${API_V1}/processes/${enc(id)}/prompt`,
  processCancel: (id: string) => `${API_V1}/processes/${enc(id)}/cancel`,
  processEvents: (id: string) => `${API_V1}/processes/${enc(id)}/events`,
  processPermissions: (id: string) => `${API_V1}/processes/${enc(id)}/permissions`,
  processPermission: (id: string, request: string) => `${API_V1}/processes/${enc(id)}/permissions/${enc(request)}`,
  filesTree: `${API_V1}/files/tree`,
  filesContent: `${API_V1}/files/content`,
  gitStatus: `${API_V1}/git/status`,
  gitDiff: `${API_V1}/git/diff`,
  gitLog: `${API_V1}/git/log`,
  gitCommit: `${API_V1}/git/commit`,
  /** Whether the session is idle by the agent's real state (activity.ts). */
  activity: `${API_V1}/activity`,
} as const;

/*
 * Query parameters:
 * - processOutput: `from` (seq, default 0), `limit` (default and max LIMITS.maxOutputPage)
 * - processStream: `from` (seq, default 0)
 * - processEvents: `from` (event seq, default 0), `limit` (default and max LIMITS.maxOutputPage),
 *   `wait` (ms, default 0, max LIMITS.maxEventWaitMs): when there is no event from `from` yet and the
 *   process runs, answer as soon as one is recorded or the process exits, at the latest after `wait`
 * - filesTree: `path` (default "."), `depth` (default 1, max 32)
 * - filesContent (GET, DELETE): `path`; DELETE also `recursive=true` for directories
 * - filesContent (PUT): body WriteFileRequest
 * - gitDiff: `base` (a ref; absent = unstaged changes against the index), `path` (limit to a path)
 * - gitLog: `limit` (default 50, max 1000), `ref` (default HEAD)
 * - activity: `window_ms` (default 5 minutes, 1 ms to 24 hours: ACTIVITY_WINDOW)
 */

/*
 * Success statuses (errors: see errors.ts):
 * - control: POST instances → 201 (created) or 200 (same id and workspace exists); DELETE instance → 204
 * - processes: POST → 201 (started) or 200 (caller id already known, same command); stdin, signal → 204
 * - ACP: prompt → 202 PromptAccepted (409 while a turn runs); cancel → 204 (409 when no turn runs);
 *   permissions → 200 PermissionList; permission answer → 204 (404 when not pending); all of them
 *   409 `conflict` on a raw process or one that exited
 * - filesContent: GET → 200 FileContent; PUT → 200 WriteFileResponse; DELETE → 204
 * - gitCommit: POST → 201 GitCommitResponse ('nothing to commit' → 409 conflict)
 * - everything else → 200 with the schema of its module
 * Unknown paths → 404 not_found and known paths with another method → 405 method_not_allowed (with an
 * `Allow` header), both only after authentication (401 first).
 */
