/**
 * The launch kit both executors and the controller's session launch share: the stage runner, the
 * launch error with its rollback errors, the rollback (one deadline setting), the stage and reason
 * names more than one layer spells, and the session identity.
 * @module
 */
export { attachRollbackErrors, isLaunchError, LaunchError } from './launch-error.js';
export { reportStage, runStage, toLaunchError, type StageNote } from './stage.js';
export { Rollback, ROLLBACK_TIMEOUT_MS } from './rollback.js';
export { INIT_STAGE, REASON, REPLACEMENT_STAGE, ROLLBACK_STOP_REASON } from './reasons.js';
export { sessionIdentity } from './identity.js';
