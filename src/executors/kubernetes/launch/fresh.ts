/**
 * A fresh launch: storage → pod_ready → bootstrap → agentctl_connect, each stage timed and
 * reported, every side effect checkpointed at once; on any failure the rollback deletes exactly
 * what this launch created (by UID, Pod before PVC) and only then releases the provisional row.
 * @module
 */
import { errorMessage, withRollbackErrors } from '../../../shared/errors.js';
import type { ExecutorInstance } from '../../executor.js';
import { isLaunchError } from '../../executor.js';
import { STAGE } from '../constants.js';
import { createNonce, resourceNames } from '../compose/index.js';
import { describeTemplateWarnings, SECURITY_WARNING_REASON, templateWarnings } from '../config/index.js';
import type { TemplateWarning } from '../types.js';
import { deleteEach, type CleanupTarget } from '../cleanup.js';
import type { KubeLaunchState } from './context.js';
import { buildInstance } from './instance.js';
import { startPod } from './start-pod.js';
import { provisionStorage } from './storage.js';

/** The rollback's own deadline, independent of the launch's signal (spec §4.9). */
const ROLLBACK_TIMEOUT_MS = 60_000;

export async function freshLaunch(l: KubeLaunchState): Promise<ExecutorInstance> {
  const nonce = createNonce(l.env.random);
  try {
    reportTemplateWarnings(l);
    await l.stage(STAGE.storage, () => provisionStorage(l));
    const { connected, delivery } = await startPod(l, { name: resourceNames(l.identity.instanceId).pod, nonce, clone: true });
    // `ready` is written by the manager once the token and nonce are stored (spec §4.8).
    return buildInstance(l, connected, { authToken: connected.token, bootstrapNonce: nonce }, true, delivery.command);
  } catch (err) {
    throw await rollback(l, err);
  }
}

/**
 * The template's security warnings (spec §3.4), non-fatal: one diagnostic, which `berth launch`
 * prints however late it starts following (a stage's waiting reason of a stage that is already over
 * by then would not be).
 */
function reportTemplateWarnings(l: KubeLaunchState): void {
  let warnings: TemplateWarning[];
  try {
    warnings = templateWarnings(l.profile, `profiles.${l.identity.profile}.kubernetes.pod_template`);
  } catch {
    return; // the profile was validated when it was recorded; a warning must never fail a launch
  }
  const text = describeTemplateWarnings(warnings);
  if (text === null) return;
  try {
    l.req.onDiagnostic?.(SECURITY_WARNING_REASON, text);
  } catch {
    // onDiagnostic must not throw; a listener bug must not fail the launch
  }
}

/** Deletes what this launch created (UID only: admission may have changed the labels) and releases the row. */
export async function rollback(l: KubeLaunchState, launchErr: unknown): Promise<Error> {
  const err = launchErr instanceof Error ? launchErr : new Error(String(launchErr));
  const deadline = AbortSignal.timeout(ROLLBACK_TIMEOUT_MS);
  const targets: CleanupTarget[] = [];
  if (l.createdPod) targets.push({ kind: 'Pod', namespace: l.namespace, ...l.createdPod, labels: null });
  if (l.createdPvc) targets.push({ kind: 'PVC', namespace: l.namespace, ...l.createdPvc, labels: null });
  const errors = await deleteEach(l.client, targets, deadline);
  if (errors.length === 0 && l.req.releaseRuntimeInventory) {
    try {
      await l.req.releaseRuntimeInventory();
    } catch (e) {
      errors.push(e);
    }
  }
  if (errors.length > 0) l.env.log.warn({ session: l.identity.sessionId, errors: errors.map(errorMessage) }, 'rollback incomplete: the provisional row keeps the recorded UIDs');
  if (isLaunchError(err)) err.rollbackErrors = errors;
  return withRollbackErrors(err, errors);
}
