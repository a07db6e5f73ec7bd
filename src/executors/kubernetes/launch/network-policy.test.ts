import { describe, expect, it } from 'vitest';
import { encodeNetworkSettings, NETWORK_SETTING } from '../../network.js';
import { META } from '../constants.js';
import { KubeHarness, NAMESPACE, POD_NAME } from '../testing/harness.js';

/** A harness whose launches carry `deny` network settings, and whose probe of the API server answers `verdicts` in turn. */
function fenced(verdicts: string[]): KubeHarness {
  const h = new KubeHarness();
  const snapshot = h.snapshot.bind(h);
  h.snapshot = () => {
    const s = snapshot();
    return { ...s, settings: { ...s.settings, [NETWORK_SETTING]: encodeNetworkSettings({ egress: 'deny', allow: [], allowClusterApi: false, allowMetadata: false, brokers: {} }) } };
  };
  h.exec.handle = (call) => (call.command[2]?.includes("require('net')") ? { stdout: `${verdicts.length > 1 ? verdicts.shift() : verdicts[0]}\n` } : undefined);
  return h;
}

describe("a launch's NetworkPolicy", () => {
  it('is created before the Pod, recorded with the Pod create, and checked enforced before the launch ends', async () => {
    const h = fenced(['reachable', 'reachable', 'blocked']);
    const order: string[] = [];
    const createPod = h.objects.createPod.bind(h.objects);
    h.objects.createPod = async (ns, pod, opts) => {
      order.push('pod');
      return createPod(ns, pod, opts);
    };
    const createPolicy = h.policies.create.bind(h.policies);
    h.policies.create = async (ns, policy) => {
      order.push('policy');
      return createPolicy(ns, policy);
    };
    const instance = await h.launch();
    expect(order).toEqual(['policy', 'pod']);
    const policy = h.policies.stored.get(`${NAMESPACE}/${POD_NAME}`);
    expect(policy?.spec?.podSelector?.matchLabels?.['berth.dev/instance-id']).toBe(instance.identity.instanceId);
    const podCreating = h.recorded.checkpoints.find((c) => c.state === 'pod_creating');
    expect(podCreating?.metadata[META.policyUid], 'recorded before the Pod exists').toBe(policy?.metadata?.uid);
    expect(h.exec.calls.filter((c) => c.command[2]?.includes("require('net')")), 'probed until blocked').toHaveLength(3);
    await instance.close();
  });

  it('fails the launch closed when the API server stays reachable, and the rollback deletes the Pod and the policy', async () => {
    const h = fenced(['reachable']);
    const realNow = Date.now;
    let shift = 0;
    Date.now = () => realNow() + shift;
    h.exec.handle = (call) => {
      if (!call.command[2]?.includes("require('net')")) return undefined;
      shift += 10_000; // each probe "takes" ten seconds: the 30 s wait runs out at once
      return { stdout: 'reachable\n' };
    };
    try {
      await expect(h.launch()).rejects.toMatchObject({ reason: 'NetworkPolicyNotEnforced', stage: 'agentctl_connect' });
    } finally {
      Date.now = realNow;
    }
    expect(h.policies.stored.size, 'policy deleted').toBe(0);
    expect(h.objects.find('Pod', NAMESPACE, POD_NAME), 'Pod deleted').toBeUndefined();
  });
});
