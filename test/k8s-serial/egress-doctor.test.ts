/**
 * `berth doctor --egress PROFILE` on the real cluster, through the built CLI: with the test
 * cluster's NetworkPolicy enforcer running it proves the profile's policy enforced (the API server
 * and the metadata address unreachable from a Pod under it, the egress proxy answering), and with
 * the enforcer turned off (`cluster.sh netpol off`: a network plugin that ignores policies) it says
 * "NetworkPolicy is not enforced on this cluster" and exits 1. Serial (the k8s-serial project, after
 * the parallel files): turning the enforcer off would open every other file's policies too.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetworkingV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../integration/cli/helpers.js';
import { berthOnCluster, FAST_AGENT_ENV, imageTemplate, ROOT } from '../k8s/support/berth.js';
import { clusterEnv, requireEnv } from '../k8s/support/env.js';
import { loadKubeConfig } from '../k8s/support/kube.js';
import { createTestNamespace, type TestNamespace } from '../k8s/support/namespace.js';
import { createExecutorServiceAccount, type ServiceAccountAccess } from '../k8s/support/service-account.js';

const env = clusterEnv();
const HOST_IP = requireEnv('BERTH_TEST_HOST_IP');
const netpol = (action: 'on' | 'off' | 'status'): string => execFileSync('bash', [join(ROOT, 'test/cluster/cluster.sh'), 'netpol', action], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('berth doctor --egress on the cluster', () => {
  let ns: TestNamespace;
  let sa: ServiceAccountAccess;
  let dataDir: string;
  let proxy: Server;

  beforeAll(async () => {
    ensureBuilt();
    const admin = loadKubeConfig(env.kubeconfig);
    ns = await createTestNamespace(admin, 'egressdoc', { podSecurity: 'restricted' });
    sa = await createExecutorServiceAccount(admin, ns.name);
    // a stand-in for the egress proxy: the doctor checks that the Pod can connect to it
    proxy = createServer((s) => s.end());
    await new Promise<void>((resolve) => proxy.listen(0, HOST_IP, () => resolve()));
    const port = (proxy.address() as { port: number }).port;
    dataDir = mkdtempSync(join(tmpdir(), 'berth-egress-doctor-'));
    writeFileSync(
      join(dataDir, 'berth.yaml'),
      JSON.stringify({
        executors: { cluster: { type: 'kubernetes', kubeconfig_path: sa.kubeconfigPath, namespace: ns.name, egress_proxy: { url: `http://${HOST_IP}:${port}` } } },
        profiles: { net: { executor: 'cluster', kubernetes: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'empty_dir' } }, network: { egress: 'allowlist', allow: ['api.example.com'] } } },
      }),
    );
  });

  afterAll(async () => {
    netpol('on');
    proxy?.close();
    await sa?.cleanup().catch(() => undefined);
    await ns?.cleanup();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const leftovers = async (): Promise<string[]> => {
    const admin = loadKubeConfig(env.kubeconfig);
    const pods = await admin.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: ns.name, labelSelector: 'app.kubernetes.io/managed-by=berth' });
    const pols = await admin.makeApiClient(NetworkingV1Api).listNamespacedNetworkPolicy({ namespace: ns.name });
    return [...pods.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => `pod/${p.metadata?.name}`), ...pols.items.map((p) => `networkpolicy/${p.metadata?.name}`)];
  };

  it('says enforced with the enforcer on, and "not enforced" with it off', async () => {
    expect(netpol('status')).toMatch(/netpol: on/);
    const on = await runCli(['doctor', '--egress', 'net'], { dataDir });
    expect(on.stdout, on.stderr).toMatch(/ok: NetworkPolicy is enforced/);
    expect(on.stdout).toMatch(/ok\s+API server\s+\S+\s+expected blocked, blocked/);
    expect(on.stdout).toMatch(/ok\s+egress proxy\s+\S+\s+expected reachable, reachable/);
    expect(on.code).toBe(0);
    expect(await leftovers(), 'the probe Pod and its policy are gone').toEqual([]);

    netpol('off');
    try {
      const off = await runCli(['doctor', '--egress', 'net'], { dataDir });
      expect(off.stdout, off.stderr).toMatch(/fail: NetworkPolicy is not enforced on this cluster: .*the API server/);
      expect(off.code).toBe(1);
    } finally {
      netpol('on');
    }
    expect(await leftovers()).toEqual([]);
  });

  it('fails a launch closed when the policy is not enforced: no agent starts, nothing is left', async () => {
    const h = await berthOnCluster({
      prefix: 'egressoff',
      profiles: { net: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'empty_dir' } } },
      profileFields: { net: { network: { egress: 'deny' } } },
    });
    try {
      netpol('off');
      try {
        const s = await h.controller.launch({ executor: 'net', env: FAST_AGENT_ENV, name: 'unfenced' });
        const v = await h.controller.waitUntilSettled(s.id);
        expect(v.state).toBe('failed');
        expect(v.error?.message).toMatch(/NetworkPolicy is not enforced on this cluster: the session's Pod still reached the API server/);
        expect(v.stages.find((st) => st.status === 'failed')).toMatchObject({ name: 'agentctl_connect', reason: 'NetworkPolicyNotEnforced' });
      } finally {
        netpol('on');
      }
      const admin = loadKubeConfig(env.kubeconfig);
      const pols = await admin.makeApiClient(NetworkingV1Api).listNamespacedNetworkPolicy({ namespace: h.ns.name });
      expect([...(await h.leftovers()), ...pols.items.map((p) => p.metadata?.name)], 'the rollback deleted the Pod and its policy').toEqual([]);
    } finally {
      await h.close();
    }
  });
});
