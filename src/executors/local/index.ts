/**
 * The local executor: a workspace directory under the data dir and a detached local agentctl.
 * @module
 */
export { LocalExecutor, userHomes, type LocalExecutorOptions } from './executor.js';
export { hostSecretPaths } from './sandbox-paths.js';
export { findOnPath } from './sandbox-plan.js';
export { OWNER_ENV } from './constants.js';
export { probeBubblewrap } from './sandbox.js';
