/**
 * The controller: the session manager over the inventory and the executors.
 * @module
 */
export { createController, type Controller, type ControllerOptions } from './create.js';
export { LAUNCH_CHECKPOINTS, type TestHooks } from './hooks.js';
export {
  LaunchValidationError,
  SessionNotFoundError,
  SessionStateError,
  type AgentProcessView,
  type ExecOptions,
  type LaunchRequest,
  type OutputChunkView,
  type RepositoryRef,
  type SessionError,
  type SessionEvent,
  type SessionService,
  type SessionState,
  type SessionView,
  type SessionWorkspace,
  type SessionWorkspaceService,
  type ShellOptions,
  type ShellSession,
  type StageRecord,
  type StageStatus,
} from './service.js';
