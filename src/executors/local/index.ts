/**
 * The local executor: a workspace directory under the data dir and a detached local agentctl.
 * @module
 */
export { LocalExecutor, userHomes, type LocalExecutorOptions } from './executor.js';
export { hostSecretPaths } from './sandbox-paths.js';
export { findOnPath } from './sandbox-plan.js';
export { STAGE as LOCAL_STAGES, CHECKPOINT as LOCAL_CHECKPOINTS, META as LOCAL_METADATA_KEYS, OWNER_ENV } from './constants.js';
export { decodeLocalMetadata, type LocalMetadata } from './metadata.js';
export { probeBubblewrap, type SandboxProbe, type SandboxMode } from './sandbox.js';
