import { CoreV1Api, Watch } from '@kubernetes/client-node';
import type { KubeConfig, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { describeError } from './kube.js';

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Polls `probe` until it returns a value other than undefined; errors thrown by
 * the probe are retried until the deadline and reported in the timeout error.
 */
export async function waitFor<T>(
  description: string,
  probe: () => Promise<T | undefined> | T | undefined,
  { timeoutMs = 60_000, intervalMs = 200 }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const why = lastError === undefined ? '' : ` (last error: ${describeError(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}${why}`);
    }
    await sleep(intervalMs);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A short, readable summary of a pod's state for error messages and logs. */
export function podSummary(pod: V1Pod | undefined): string {
  if (!pod) return '(pod not found)';
  const status = pod.status;
  const conditions = (status?.conditions ?? [])
    .map((c) => `${c.type}=${c.status}${c.reason ? `(${c.reason})` : ''}`)
    .join(' ');
  const containers = [...(status?.initContainerStatuses ?? []), ...(status?.containerStatuses ?? [])]
    .map((c) => {
      const state = c.state?.running
        ? 'running'
        : c.state?.waiting
          ? `waiting:${c.state.waiting.reason ?? ''}${c.state.waiting.message ? ` ${c.state.waiting.message}` : ''}`
          : c.state?.terminated
            ? `terminated:${c.state.terminated.reason ?? ''}(${c.state.terminated.exitCode})`
            : 'unknown';
      return `${c.name}=${state}`;
    })
    .join(' ');
  return `phase=${status?.phase ?? '?'} ${conditions} ${containers}`.trim();
}

export function podCondition(pod: V1Pod, type: string): V1PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

/** True once every container of the pod has started and is running. */
export function allContainersRunning(pod: V1Pod): boolean {
  const statuses = pod.status?.containerStatuses ?? [];
  const wanted = pod.spec?.containers.length ?? 0;
  return statuses.length === wanted && wanted > 0 && statuses.every((s) => s.state?.running !== undefined);
}

/**
 * Waits, with a watch (so the moment is exact, not a polling interval late),
 * until `predicate` holds for the pod, and returns the pod as it was then.
 * The watch is resumed (list + watch from the list's resourceVersion) if the
 * server closes it early.
 */
export async function waitForPod(
  kc: KubeConfig,
  namespace: string,
  name: string,
  predicate: (pod: V1Pod) => boolean,
  { timeoutMs = 120_000, description = 'the expected state' }: { timeoutMs?: number; description?: string } = {},
): Promise<V1Pod> {
  const core = kc.makeApiClient(CoreV1Api);
  const watch = new Watch(kc);
  const fieldSelector = `metadata.name=${name}`;
  const deadline = Date.now() + timeoutMs;
  let last: V1Pod | undefined;

  for (;;) {
    const list = await core.listNamespacedPod({ namespace, fieldSelector });
    last = list.items[0] ?? last;
    if (list.items[0] && predicate(list.items[0])) return list.items[0];
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;

    const outcome = await new Promise<{ pod?: V1Pod; expired?: boolean }>((resolve, reject) => {
      let settled = false;
      let controller: AbortController | undefined;
      const finish = (value: { pod?: V1Pod; expired?: boolean }): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        controller?.abort();
        resolve(value);
      };
      const timer = setTimeout(() => finish({ expired: true }), remaining);
      watch
        .watch(
          `/api/v1/namespaces/${namespace}/pods`,
          { fieldSelector, resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: false },
          (type: string, obj: unknown) => {
            if (type === 'ERROR') {
              finish({}); // e.g. 410 Gone: relist
              return;
            }
            const pod = obj as V1Pod;
            if (type === 'DELETED') {
              last = undefined;
              return;
            }
            last = pod;
            if (predicate(pod)) finish({ pod });
          },
          () => finish({}), // closed by the server: relist and watch again
        )
        .then(
          (c) => {
            controller = c;
            if (settled) c.abort();
          },
          (err: unknown) => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            reject(err instanceof Error ? err : new Error(String(err)));
          },
        );
    });
    if (outcome.pod) return outcome.pod;
    if (outcome.expired) break;
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for pod ${namespace}/${name} to reach ${description}; last seen: ${podSummary(last)}`);
}

export function waitForPodRunning(kc: KubeConfig, namespace: string, name: string, timeoutMs = 120_000): Promise<V1Pod> {
  return waitForPod(kc, namespace, name, allContainersRunning, { timeoutMs, description: 'all containers running' });
}

/** Waits until the pod no longer exists. */
export async function waitForPodGone(kc: KubeConfig, namespace: string, name: string, timeoutMs = 60_000): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await waitFor(
    `pod ${namespace}/${name} to be deleted`,
    async () => {
      const list = await core.listNamespacedPod({ namespace, fieldSelector: `metadata.name=${name}` });
      return list.items.length === 0 ? true : undefined;
    },
    { timeoutMs, intervalMs: 250 },
  );
}
