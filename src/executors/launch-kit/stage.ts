/**
 * The one stage runner of every launch: a stage reports `running`, then `succeeded` or `failed`
 * (with the LaunchError's reason and message), and any failure leaves it as a LaunchError naming
 * the stage. The listener is guarded: a throwing `onStage` never fails a launch.
 * @module
 */
import { errorMessage } from '../../shared/errors.js';
import { sanitize } from '../../shared/sanitize.js';
import type { StageEvent } from '../executor.js';
import { isLaunchError, LaunchError } from './launch-error.js';
import { REASON } from './reasons.js';

/** Receives the stage events of a launch (`CreateInstanceRequest.onStage`). */
type StageListener = (event: StageEvent) => void;

/** A stage's detail: a short reason and a message for the user (never a secret). */
export interface StageNote {
  reason: string;
  message: string;
}

interface StageOptions {
  /**
   * A detail reported right after the stage starts, as a `waiting` event, and kept on its
   * `succeeded` event (e.g. the warning that agentctl runs unconfined). Null: none.
   */
  note?: () => StageNote | null;
  /** The reason of a failure that is not a LaunchError yet. @default {@link REASON.stageFailed} */
  reasonOf?: (err: unknown) => string;
}

/** Reports one event (stamped now unless it has its `at`); a listener that throws is ignored. */
export function reportStage(onStage: StageListener, event: Omit<StageEvent, 'at'> & { at?: Date }): void {
  try {
    onStage({ ...event, at: event.at ?? new Date() });
  } catch {
    // onStage must not throw; a listener bug must not fail the launch
  }
}

/** `err` as the LaunchError of stage `name`: a LaunchError stays as it is, anything else is wrapped (message sanitized). */
export function toLaunchError(name: string, err: unknown, reasonOf: (err: unknown) => string = () => REASON.stageFailed): LaunchError {
  return isLaunchError(err) ? err : new LaunchError(name, reasonOf(err), `${name}: ${sanitize(errorMessage(err))}`, { cause: err });
}

/** Runs `fn` as stage `name`: start and end events, any failure thrown as the stage's LaunchError. */
export async function runStage<T>(onStage: StageListener, name: string, fn: () => Promise<T>, opts: StageOptions = {}): Promise<T> {
  reportStage(onStage, { stage: name, status: 'running' });
  let detail: StageNote | null = null;
  try {
    detail = opts.note?.() ?? null;
    if (detail !== null) reportStage(onStage, { stage: name, status: 'waiting', ...detail });
    const out = await fn();
    reportStage(onStage, { stage: name, status: 'succeeded', ...(detail ?? {}) });
    return out;
  } catch (err) {
    const launchErr = toLaunchError(name, err, opts.reasonOf);
    reportStage(onStage, { stage: name, status: 'failed', reason: launchErr.reason, message: launchErr.message });
    throw launchErr;
  }
}
