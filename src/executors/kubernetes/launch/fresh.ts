/**
 * A fresh launch: storage → pod_ready → bootstrap → agentctl_connect, each stage timed and
 * reported, every side effect checkpointed at once; on any failure the rollback deletes exactly
 * what this launch created (by UID, Pod before PVC) and only then releases the provisional row;
 * before it, the failure is written as a Kubernetes Event on the Pod (else the PVC).
 * The connect starts while the bootstrap still runs prepare.sh (start-pod.ts); its stage awaits it.
 * @module
 */
import { errorMessage } from '../../../shared/errors.js';
import type { ExecutorInstance } from '../../executor.js';
import { Rollback } from '../../launch-kit/index.js';
import { STAGE } from '../constants.js';
import { createNonce, resourceNames } from '../compose/index.js';
import { describeTemplateWarnings, SECURITY_WARNING_REASON, templateWarnings } from '../config/index.js';
import type { TemplateWarning } from '../types.js';
import { deleteEach, type CleanupTarget } from '../cleanup.js';
import { deletePolicy } from '../policy-cleanup.js';
import type { KubeLaunchState } from './context.js';
import { buildInstance } from './instance.js';
import { PodStart } from './start-pod.js';
import { provisionStorage } from './storage.js';

/** Launches a new session: its four stages in order, then the connected instance; any failure is rolled back. */
export async function freshLaunch(l: KubeLaunchState): Promise<ExecutorInstance> {
  const nonce = createNonce(l.env.random);
  const pod = new PodStart(l, { name: resourceNames(l.identity.instanceId).pod, nonce, clone: true });
  try {
    reportTemplateWarnings(l);
    await l.stage(STAGE.storage, () => provisionStorage(l));
    await l.stage(STAGE.podReady, () => pod.ready());
    await l.stage(STAGE.bootstrap, () => pod.bootstrap());
    const connected = await l.stage(STAGE.agentctlConnect, () => pod.connect());
    // `ready` is written by the manager once the token and nonce are stored (spec §4.8).
    return buildInstance(l, connected, { authToken: connected.token, bootstrapNonce: nonce }, true, pod.agentctlCommand);
  } catch (err) {
    pod.abandon();
    await l.recordFailure(err, 'Berth deletes what this launch created.');
    throw await rollback(l, err);
  } finally {
    pod.close();
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

/**
 * Deletes what this launch created (UID only: admission may have changed the labels), under the
 * launch kit's rollback deadline (independent of the launch's signal, spec §4.9), and releases the
 * row only when every delete went through.
 */
export async function rollback(l: KubeLaunchState, launchErr: unknown): Promise<Error> {
  const rb = new Rollback();
  const targets: CleanupTarget[] = [];
  if (l.createdPod) targets.push({ kind: 'Pod', namespace: l.namespace, ...l.createdPod, labels: null });
  if (l.createdPvc) targets.push({ kind: 'PVC', namespace: l.namespace, ...l.createdPvc, labels: null });
  rb.record(...(await deleteEach(l.kube.objects, targets, rb.signal)));
  const policy = l.createdPolicy;
  if (policy) await rb.step('delete the NetworkPolicy', async () => void (await deletePolicy(l.kube.policies, { namespace: l.namespace, ...policy }, rb.signal)));
  const { req } = l;
  if (req.releaseRuntimeInventory) await rb.step('release the runtime row', async () => req.releaseRuntimeInventory?.());
  if (!rb.clean) l.env.log.warn({ session: l.identity.sessionId, errors: rb.errors.map(errorMessage) }, 'rollback incomplete: the provisional row keeps the recorded UIDs');
  return rb.finish(launchErr);
}
