/**
 * The session's NetworkPolicy (issue 23), created before its Pod: every Pod of a session whose
 * profile has `network:` starts under its policy. Named like the Pod, labelled like it, stamped with
 * the installation id and a create nonce, created with the same ambiguous-outcome reconciliation;
 * its name and UID are recorded with the Pod create that follows (a crash between the two leaves an
 * unrecorded policy, which the sweep of unrecorded objects deletes). A resume keeps the recorded
 * policy; one that is gone (or not the recorded one) is replaced before the new Pod.
 * @module
 */
import { LaunchError } from '../../launch-kit/index.js';
import { networkSettingsOf } from '../../network.js';
import { composeNetworkPolicy, createNonce } from '../compose/index.js';
import { STAGE } from '../constants.js';
import type { KubeLaunchState } from './context.js';
import { createOwned } from './create.js';

/** Makes sure the session's policy exists before its Pod is created; no-op without network settings. */
export async function ensureNetworkPolicy(l: KubeLaunchState): Promise<void> {
  let settings;
  try {
    settings = networkSettingsOf(l.req.profile.settings);
  } catch (err) {
    throw new LaunchError(STAGE.podReady, 'NetworkPolicyInvalid', `the session's recorded network settings cannot be read (${(err as Error).message}); remove the session and launch again`);
  }
  if (settings === null) return;
  if (l.meta.policyUid !== null) {
    const found = await l.kube.policies.get(l.namespace, l.meta.policyName ?? '', l.signal);
    if (found?.metadata?.uid === l.meta.policyUid && !found.metadata.deletionTimestamp) return;
  }
  const name = l.meta.podName;
  let desired;
  try {
    desired = composeNetworkPolicy({
      identity: l.identity,
      namespace: l.namespace,
      name,
      settings,
      proxy: l.env.egressProxy,
      apiServerAddresses: settings.egress === 'open' && !settings.allowClusterApi ? await l.kube.policies.apiServerAddresses(l.signal) : [],
      createNonce: createNonce(l.env.random),
      installationId: l.env.installationId,
    });
  } catch (err) {
    throw new LaunchError(STAGE.podReady, 'NetworkPolicyInvalid', `${(err as Error).message} (set executors.${l.env.executorName}.egress_proxy)`);
  }
  const created = await createOwned({
    kind: 'NetworkPolicy',
    stage: STAGE.podReady,
    desired,
    create: () => l.kube.policies.create(l.namespace, desired, { ...(l.signal ? { signal: l.signal } : {}) }),
    get: (signal) => l.kube.policies.get(l.namespace, name, signal),
  });
  const uid = created.metadata?.uid ?? '';
  l.createdPolicy = { name, uid };
  l.meta = { ...l.meta, policyName: name, policyUid: uid };
}
