/**
 * The controller: the session manager over the inventory and the executors.
 * @module
 */
export { createController, type Controller } from './create.js';
export { executorCapabilities, metadataKeyPrefixes } from './executor-factory.js';
export { startEgressProxy } from './egress-proxy.js';
export { LAUNCH_CHECKPOINTS } from './hooks.js';
export {
  LaunchValidationError,
  SessionNotFoundError,
  SessionStateError,
  type SessionEvent,
  type SessionService,
  type SessionState,
  type SessionView,
  type SessionWorkspaceService,
  type SessionConversationService,
  type SessionPoolService,
  type OutputChunkView,
  type ShellSession,
} from './service.js';
