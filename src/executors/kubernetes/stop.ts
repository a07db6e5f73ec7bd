/**
 * Stop and destroy (spec §8): a stop frees the compute and keeps the work (the Pod deleted by UID,
 * the claim kept; an empty_dir session keeps its Pod and only stops the agent), a destroy verifies
 * every recorded object first, runs the profile's cleanup script, then deletes the Pod and — only
 * if Berth created it — the claim, waiting until both are gone. Any mismatch deletes nothing. An
 * object whose create was recorded only as an intent (`pvc_creating` / `pod_creating`) is found by
 * its create nonce's digest and then treated like a recorded one.
 * @module
 */
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { sanitize } from '../../shared/sanitize.js';
import type { StopOptions, StopResult, StopTarget } from '../executor.js';
import { deleteChecked, verifyTarget, type CleanupTarget, type Verified } from './cleanup.js';
import { ownershipLabels } from './compose/index.js';
import { decodeProfileSnapshot } from './config/index.js';
import { META, PATH } from './constants.js';
import { KubeExecError, type KubePorts } from './kube/index.js';
import { decodeKubernetesMetadata, identityOf, podAdmissionVerified, pvcAdmissionVerified, type KubernetesMetadata } from './metadata.js';
import { pendingTarget } from './pending.js';
import { deletePolicy, policyTarget } from './policy-cleanup.js';

/** Settings key of the profile snapshot in `ExecutorProfileSnapshot.settings`. */
export const PROFILE_SETTING = 'kubernetes_profile';
const CLEANUP_SCRIPT_TIMEOUT_MS = 60_000;
const AGENT_STOP_TIMEOUT_MS = 20_000;

/** The recorded metadata, validated for the checkpoint state it was written at. */
export function recordedMetadata(metadata: Readonly<Record<string, string>>): { meta: KubernetesMetadata; state: string } {
  const state = metadata[META.state] ?? 'ready';
  return { meta: decodeKubernetesMetadata(metadata, state), state };
}

function podTarget(m: KubernetesMetadata, state: string): CleanupTarget | null {
  if (m.podUid === null) return null;
  return { kind: 'Pod', namespace: m.namespace, name: m.podName, uid: m.podUid, labels: podAdmissionVerified(state) ? ownershipLabels(identityOf(m)) : null };
}

function pvcTarget(m: KubernetesMetadata, state: string): CleanupTarget | null {
  if (!m.pvcCreated || m.pvcName === null || m.pvcUid === null) return null;
  return { kind: 'PVC', namespace: m.namespace, name: m.pvcName, uid: m.pvcUid, labels: pvcAdmissionVerified(state) ? ownershipLabels(identityOf(m)) : null };
}

export async function stopKubernetesInstance(kube: KubePorts, target: StopTarget, opts: StopOptions, log: Logger): Promise<StopResult | void> {
  const objects = kube.objects;
  const signal = opts.signal ?? AbortSignal.timeout(180_000);
  const { meta, state } = recordedMetadata(target.metadata);
  // A Pod whose create the controller did not live to record (`pod_creating`) is stopped like a recorded one.
  const pending = await pendingTarget(objects, meta, state, signal, log);
  const pod = podTarget(meta, state) ?? (pending?.kind === 'Pod' ? pending : null);
  if (!opts.destroy) {
    if (meta.workspaceMode === 'empty_dir') {
      // Deleting the Pod would lose the work: only the agent stops (its agentctl instance goes).
      if (!target.control) throw new Error('cannot stop the agent of an empty_dir session that is not connected (resume it first, or remove the session)');
      await target.control.deleteInstance(meta.instanceId, { signal });
      log.info({ session: meta.sessionId }, 'empty_dir session: the agent was stopped, the Pod and its workspace kept');
      return;
    }
    if (pod === null) return;
    // A graceful delete (deletePod): the agent gets SIGTERM from agentctl, and the Pod is gone only
    // once its containers stopped. Recorded, so a resume may exec into the new Pod at once; a Pod
    // found gone may have been deleted at once by someone else, its containers still running.
    const outcome = await deleteChecked(objects, await verifyTarget(objects, pod, signal, 'refuse'), signal, 'refuse');
    return outcome === 'deleted' ? { metadata: { [META.podReclaimed]: 'true' } } : undefined;
  }
  // Destroy: verify everything before deleting anything.
  const targets = [pod, pvcTarget(meta, state) ?? (pending?.kind === 'PVC' ? pending : null)].filter((t): t is CleanupTarget => t !== null);
  const verified: Verified[] = [];
  for (const t of targets) verified.push(await verifyTarget(objects, t, signal, 'refuse'));
  const livePod = verified.find((v) => v.target.kind === 'Pod' && v.resourceVersion !== null);
  if (livePod && podAdmissionVerified(state)) {
    await stopAgentFirst(meta, target, log);
    await runCleanupScript(kube, meta, target, log);
  }
  for (const v of verified) await deleteChecked(objects, v, signal, 'refuse');
  // after the Pod it selected: a Pod of the session never runs without its policy
  const policy = policyTarget(meta);
  if (policy !== null && !(await deletePolicy(kube.policies, policy, signal))) {
    log.warn({ session: meta.sessionId, policy: `${policy.namespace}/${policy.name}` }, 'the NetworkPolicy under the recorded name is not the one Berth created: left alone');
  }
}

/**
 * Before the cleanup script: the agent and every process of the instance stop (SIGTERM, then SIGKILL
 * after agentctl's grace period), so the script sees a quiet workspace — no agent still writing, no
 * `git` of the agent's holding the index lock the script's own `git add` needs. Best effort: an
 * agentctl that cannot be asked does not block the destroy.
 */
async function stopAgentFirst(meta: KubernetesMetadata, target: StopTarget, log: Logger): Promise<void> {
  if (!target.control) return;
  try {
    await target.control.deleteInstance(meta.instanceId, { signal: AbortSignal.timeout(AGENT_STOP_TIMEOUT_MS) });
  } catch (err) {
    log.warn({ session: meta.sessionId, err: sanitize(errorMessage(err)) }, 'could not stop the agent before the cleanup script; running it anyway');
  }
}

/** The profile's cleanup script, in the Pod, before it is deleted; a failure is logged and does not block the delete. */
async function runCleanupScript(kube: KubePorts, meta: KubernetesMetadata, target: StopTarget, log: Logger): Promise<void> {
  const snapshot = target.profile?.settings[PROFILE_SETTING];
  if (snapshot === undefined) return;
  let script: string;
  try {
    script = decodeProfileSnapshot(snapshot).cleanupScript;
  } catch (err) {
    log.warn({ session: meta.sessionId, err: errorMessage(err) }, 'cleanup script skipped: the recorded profile cannot be read');
    return;
  }
  if (script.trim() === '') return;
  try {
    const res = await kube.exec.exec({
      namespace: meta.namespace,
      pod: meta.podName,
      container: meta.mainContainer,
      // as workspace processes see it: the private HOME (its git config trusts the workspace), in /workspace
      command: ['sh', '-c', `export HOME=${PATH.home}\ncd ${PATH.workspace}\n${script}`],
      signal: AbortSignal.timeout(CLEANUP_SCRIPT_TIMEOUT_MS),
    });
    if (res.exitCode !== 0) log.warn({ session: meta.sessionId, exitCode: res.exitCode, stderr: sanitize(res.stderr.slice(-500)) }, 'cleanup script failed; deleting anyway');
  } catch (err) {
    const partial = err instanceof KubeExecError ? err.partial : undefined;
    const timedOut = err instanceof KubeExecError && err.kind === 'aborted';
    log.warn(
      { session: meta.sessionId, err: sanitize(errorMessage(err)), ...(partial ? { stdout: sanitize(partial.stdout.slice(-500)), stderr: sanitize(partial.stderr.slice(-500)) } : {}) },
      timedOut ? `cleanup script did not finish within ${CLEANUP_SCRIPT_TIMEOUT_MS / 1000} s; deleting anyway` : 'cleanup script could not run; deleting anyway',
    );
  }
}
