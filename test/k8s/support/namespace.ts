import { randomBytes } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1Namespace } from '@kubernetes/client-node';
import { isNotFound } from './kube.js';
import { waitFor } from './wait.js';

export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';

export interface TestNamespace {
  name: string;
  namespace: V1Namespace;
  /** Deletes the namespace and waits until it (and so every pod in it) is gone. */
  cleanup(): Promise<void>;
}

export interface TestNamespaceOptions {
  /** Enforced Pod Security level (pod-security.kubernetes.io/enforce). Default: restricted. */
  podSecurity?: PodSecurityLevel;
  labels?: Record<string, string>;
  /** How long cleanup() waits for the namespace to disappear. Default 120 s. */
  cleanupTimeoutMs?: number;
}

export const TEST_NAMESPACE_LABEL = 'berth.dev/test';

/** A unique, DNS-1123 name: `prefix-xxxxxx`. */
export function uniqueName(prefix: string): string {
  const clean = prefix.toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return `${clean || 't'}-${randomBytes(3).toString('hex')}`;
}

/**
 * Creates a uniquely named namespace labelled for the given Pod Security level
 * and waits for its `default` ServiceAccount (created by the controller-manager;
 * pods are refused until it exists).
 */
export async function createTestNamespace(
  kc: KubeConfig,
  prefix: string,
  { podSecurity = 'restricted', labels = {}, cleanupTimeoutMs = 120_000 }: TestNamespaceOptions = {},
): Promise<TestNamespace> {
  const core = kc.makeApiClient(CoreV1Api);
  const name = uniqueName(`berth-${prefix}`);
  const namespace = await core.createNamespace({
    body: {
      metadata: {
        name,
        labels: {
          [TEST_NAMESPACE_LABEL]: 'true',
          'pod-security.kubernetes.io/enforce': podSecurity,
          'pod-security.kubernetes.io/enforce-version': 'latest',
          'pod-security.kubernetes.io/warn': podSecurity,
          ...labels,
        },
      },
    },
  });
  await waitFor(
    `ServiceAccount ${name}/default`,
    async () => {
      try {
        return await core.readNamespacedServiceAccount({ name: 'default', namespace: name });
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );

  return {
    name,
    namespace,
    async cleanup() {
      try {
        await core.deleteNamespace({ name });
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      await waitFor(
        `namespace ${name} to be deleted`,
        async () => {
          try {
            await core.readNamespace({ name });
            return undefined;
          } catch (err) {
            if (isNotFound(err)) return true;
            throw err;
          }
        },
        { timeoutMs: cleanupTimeoutMs, intervalMs: 500 },
      );
    },
  };
}
