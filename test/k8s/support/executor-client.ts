/**
 * The common setup of the kube-layer tests: an admin KubeConfig, a fresh `restricted` namespace,
 * the executor's ServiceAccount in it (deploy/rbac.yaml) and a KubeClient that acts as that
 * ServiceAccount, built by the code under test from a kubeconfig file.
 * @module
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '../../../src/executors/kubernetes/kube/index.js';
import type { KubeClient } from '../../../src/executors/kubernetes/kube/index.js';
import type { KubernetesConnection } from '../../../src/executors/kubernetes/types.js';
import { assertClusterReachable, loadKubeConfig } from './kube.js';
import { createTestNamespace } from './namespace.js';
import type { TestNamespace } from './namespace.js';
import { createExecutorServiceAccount } from './service-account.js';
import type { ServiceAccountAccess, ServiceAccountOptions } from './service-account.js';

export interface ExecutorFixture {
  /** Admin (system:masters): for setup and for checks the executor is not allowed to make. */
  admin: KubeConfig;
  ns: TestNamespace;
  sa: ServiceAccountAccess;
  /** The code under test, authenticated as the ServiceAccount. */
  client: KubeClient;
  cleanup(): Promise<void>;
}

export function connectionFor(kubeconfigPath: string, namespace: string, overrides: Partial<KubernetesConnection> = {}): KubernetesConnection {
  return { authMode: 'kubeconfig', kubeconfigPath, kubeContext: null, namespace, requestTimeoutSeconds: 30, ...overrides };
}

export async function executorFixture(prefix: string, opts: ServiceAccountOptions = {}): Promise<ExecutorFixture> {
  const admin = loadKubeConfig();
  await assertClusterReachable(admin);
  const ns = await createTestNamespace(admin, prefix, { podSecurity: 'restricted' });
  const sa = await createExecutorServiceAccount(admin, ns.name, opts);
  const client = createKubeClient(connectionFor(sa.kubeconfigPath, ns.name));
  return {
    admin,
    ns,
    sa,
    client,
    async cleanup() {
      await sa.cleanup();
      await ns.cleanup();
    },
  };
}
