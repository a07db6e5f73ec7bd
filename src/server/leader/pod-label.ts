/**
 * The leader's mark on its own Pod: the label `berth.dev/leader: "true"`, which the chart's Service
 * selects (with leader election every replica's Pod is Ready, a standby too, so a rollout can go
 * on; the label is what sends traffic to the leader only). Set once the new leader serves, removed
 * when it steps down, and removed when a replica starts (a container restarted in a Pod that led).
 * @module
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';

const LEADER_LABEL = 'berth.dev/leader';

/** Sets (true) or removes (false) the leader label on Pod `namespace/pod`. */
export type MarkLeader = (leading: boolean) => Promise<void>;

export function podLeaderLabel(kc: KubeConfig, target: { namespace: string; pod: string }): MarkLeader {
  const api = kc.makeApiClient(CoreV1Api);
  return async (leading) => {
    // a JSON merge patch: null removes the label (and removing an absent one is no error)
    const body = { metadata: { labels: { [LEADER_LABEL]: leading ? 'true' : null } } };
    await api.patchNamespacedPod({ name: target.pod, namespace: target.namespace, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  };
}
