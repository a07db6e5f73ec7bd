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

/** How long a new Pod's policy may take to reach the cluster's enforcer before the launch fails. */
const ENFORCEMENT_WAIT_MS = 30_000;
/** One probe: connected, refused (its packets got through), or nothing within half a second (dropped: a connect to the API server otherwise completes in milliseconds). */
const PROBE = `if command -v node >/dev/null 2>&1; then exec node -e "const s=require('net').connect({host:process.argv[1],port:+process.argv[2]});s.setTimeout(500);s.on('connect',()=>{console.log('reachable');s.destroy()});s.on('timeout',()=>{console.log('blocked');s.destroy()});s.on('error',e=>console.log(e.code==='ECONNREFUSED'?'reachable':'blocked'))" "$1" "$2"; fi
if command -v bash >/dev/null 2>&1; then if timeout 0.5 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; then echo reachable; else echo blocked; fi; exit 0; fi
echo unknown`;

/**
 * Before the agent starts: proof from inside the Pod that its policy holds — the API server, which
 * every Pod reaches where policies are not enforced, must not answer. An enforcer may learn a new
 * Pod's address a moment after it starts (kube-network-policies does), so the probe is repeated for
 * up to {@link ENFORCEMENT_WAIT_MS}; past that the launch fails: Berth does not start an agent it
 * cannot hold to its profile's policy. Skipped when the policy lets the API server through, and
 * (with a diagnostic) when the image has neither node nor bash to probe with.
 */
export async function awaitPolicyEnforced(l: KubeLaunchState): Promise<void> {
  let settings;
  try {
    settings = networkSettingsOf(l.req.profile.settings);
  } catch {
    return; // ensureNetworkPolicy reported it
  }
  if (settings === null || (settings.egress === 'open' && settings.allowClusterApi)) return;
  const api = l.kube.policies.apiServerEndpoint();
  const deadline = Date.now() + ENFORCEMENT_WAIT_MS;
  for (let probes = 1; ; probes++) {
    const r = await l.kube.exec.exec({
      namespace: l.namespace,
      pod: l.meta.podName,
      container: l.profile.mainContainer,
      command: ['sh', '-c', PROBE, 'probe', api.host, String(api.port)],
      ...(l.signal ? { signal: l.signal } : {}),
    });
    const verdict = r.stdout.trim().split('\n').pop() ?? '';
    if (verdict === 'blocked') return;
    if (verdict !== 'reachable') {
      l.req.onDiagnostic?.('NetworkPolicyUnverified', `the image has neither node nor bash to check that the session's NetworkPolicy is enforced: check the cluster with berth doctor --egress ${l.identity.profile}`);
      return;
    }
    if (Date.now() > deadline) {
      throw new LaunchError(
        STAGE.agentctlConnect,
        'NetworkPolicyNotEnforced',
        `NetworkPolicy is not enforced on this cluster: the session's Pod still reached the API server (${api.host}:${api.port}) ${ENFORCEMENT_WAIT_MS / 1000} s after its policy was created (${probes} probes); ` +
          `Berth does not start an agent it cannot hold to the profile's policy (use a network plugin that enforces NetworkPolicy; check with berth doctor --egress ${l.identity.profile})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
