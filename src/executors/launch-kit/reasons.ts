/**
 * Names of stages and reasons that more than one layer spells: the executors write them, the
 * controller reads them (and `berth status` shows them).
 * @module
 */

/** The stage of everything a launch checks before its first side effect (the request, the record, the secrets). */
export const INIT_STAGE = 'initialize';

/** The stage a replacement of a ready session's Pod shows in `berth status` (why and when). */
export const REPLACEMENT_STAGE = 'pod_replaced';

/** The `reason` of a LaunchError or diagnostic that a reader acts on. */
export const REASON = {
  /** The instance's workspace went with it (an emptyDir Pod that is gone): the session fails for good. */
  workspaceLost: 'WorkspaceLost',
  /** The recorded runtime row names another instance than the request. */
  instanceMismatch: 'InstanceMismatch',
  /** A rollback or recovery cleanup left something behind (the row keeps it for the next attempt). */
  rollbackIncomplete: 'RollbackIncomplete',
  /** A ready session's connection is being re-established. */
  reconnecting: 'Reconnecting',
  /** A stage failed with an error that named no reason of its own. */
  stageFailed: 'Error',
} as const;

/** The `StopOptions.reason` of a stop that undoes a failed launch. */
export const ROLLBACK_STOP_REASON = 'rollback';
