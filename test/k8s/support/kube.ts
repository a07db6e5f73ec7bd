import { existsSync } from 'node:fs';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { V1Status } from '@kubernetes/client-node';
import { clusterEnv } from './env.js';

/** Loads the test cluster's kubeconfig from BERTH_TEST_KUBECONFIG (never ~/.kube/config). */
export function loadKubeConfig(path: string = clusterEnv().kubeconfig): KubeConfig {
  if (!existsSync(path)) {
    throw new Error(`kubeconfig ${path} (BERTH_TEST_KUBECONFIG) does not exist: is the test cluster up?`);
  }
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** Fails fast, with a clear message, when the API server cannot be reached. */
export async function assertClusterReachable(kc: KubeConfig): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  try {
    await core.listNode();
  } catch (err) {
    const server = kc.getCurrentCluster()?.server ?? '(no server)';
    throw new Error(`test cluster API server ${server} is not reachable: ${describeError(err)}`, { cause: err });
  }
}

/**
 * The Kubernetes Status carried by a failed API call. client-node 1.4.0 keeps
 * ApiException.body as the raw response text, so it is parsed here.
 */
export interface ApiFailure {
  code: number;
  reason: string | undefined;
  message: string | undefined;
  status: V1Status | undefined;
}

export function apiFailure(err: unknown): ApiFailure | undefined {
  if (!(err instanceof ApiException)) return undefined;
  const body: unknown = err.body;
  let status: V1Status | undefined;
  if (typeof body === 'string' && body.trim() !== '') {
    try {
      status = JSON.parse(body) as V1Status;
    } catch {
      status = undefined;
    }
  } else if (body !== null && typeof body === 'object') {
    status = body as V1Status;
  }
  return { code: err.code, reason: status?.reason, message: status?.message, status };
}

export function describeError(err: unknown): string {
  const failure = apiFailure(err);
  if (failure) return `HTTP ${failure.code} ${failure.reason ?? ''}: ${failure.message ?? ''}`.trim();
  return err instanceof Error ? err.message : String(err);
}

/** Runs `fn`, expecting it to fail with an API error of HTTP status `code`; returns the failure. */
export async function expectApiFailure(code: number, fn: () => Promise<unknown>): Promise<ApiFailure> {
  let result: unknown;
  try {
    result = await fn();
  } catch (err) {
    const failure = apiFailure(err);
    if (!failure) throw err;
    if (failure.code !== code) {
      throw new Error(`expected HTTP ${code}, got ${describeError(err)}`, { cause: err });
    }
    return failure;
  }
  throw new Error(`expected HTTP ${code}, but the call succeeded: ${JSON.stringify(result)?.slice(0, 300)}`);
}

export function isNotFound(err: unknown): boolean {
  return apiFailure(err)?.code === 404;
}
