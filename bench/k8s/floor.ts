/**
 * The two Kubernetes launch floors of issue 11, measured with client-node directly (not Berth's
 * code), as the admin kubeconfig, for a Pod that only sleeps: the *API-visible floor* — the create
 * call → the watch event that shows the main container running — and the *real floor* — the create
 * call → the first exec into the container that succeeds (one `true` at a time, the next attempt
 * 25 ms after a refused one; the time is taken when the successful exec returns). With a PVC the
 * clock starts at the PVC create call and the Pod is created right after it, without waiting for
 * the binding (the scheduler waits for it). Millisecond precision: `performance.now()` in this
 * process, never the Pod's whole-second timestamps.
 * @module
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, Watch } from '@kubernetes/client-node';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { execInPod } from '../../test/k8s/support/exec.js';
import { restrictedPod } from '../../test/k8s/support/pods.js';

export interface FloorSample {
  /** Create call → the watch event with the main container running. */
  apiMs: number;
  /** Create call → the first successful exec returned. */
  realMs: number;
  /** Exec attempts until the first success. */
  attempts: number;
}

const CONTAINER = 'main';
/** A floor Pod that takes this long is given up (and reported, with its conditions) rather than waited for. */
const TIMEOUT_MS = 30_000;
const RETRY_MS = 25;

function isRunning(pod: V1Pod | undefined): boolean {
  return pod?.status?.containerStatuses?.some((c) => c.name === CONTAINER && c.state?.running !== undefined) === true;
}

/** One floor sample: a sleeping Pod of `image` (with a fresh 1Gi PVC mounted when `withPvc`), then deleted. */
export async function measureFloor(kc: KubeConfig, namespace: string, image: string, name: string, withPvc: boolean): Promise<FloorSample> {
  const core = kc.makeApiClient(CoreV1Api);
  const deadline = AbortSignal.timeout(TIMEOUT_MS);
  let onRunning: (t: number) => void = () => undefined;
  const running = new Promise<number>((resolve) => (onRunning = resolve));
  const watch = await new Watch(kc).watch(
    `/api/v1/namespaces/${namespace}/pods`,
    { fieldSelector: `metadata.name=${name}` },
    (_type, obj: V1Pod) => {
      if (isRunning(obj)) onRunning(performance.now());
    },
    () => undefined,
  );
  const pod = restrictedPod({
    name,
    containerName: CONTAINER,
    image,
    imagePullPolicy: 'Never',
    command: ['sleep', '3600'],
    terminationGracePeriodSeconds: 0,
    ...(withPvc ? { volumeMounts: [{ name: 'data', mountPath: '/data' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: name } }] } : {}),
  });
  try {
    const t0 = performance.now();
    if (withPvc) {
      await core.createNamespacedPersistentVolumeClaim({
        namespace,
        body: { metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
      });
    }
    await core.createNamespacedPod({ namespace, body: pod });
    let attempts = 0;
    let realAt: number | undefined;
    while (realAt === undefined) {
      if (deadline.aborted) {
        const seen = await core.readNamespacedPod({ namespace, name }).catch(() => undefined);
        const conditions = (seen?.status?.conditions ?? []).map((c) => `${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''}`).join('; ');
        throw new Error(`floor pod ${namespace}/${name}: no exec succeeded within ${TIMEOUT_MS} ms (node ${seen?.spec?.nodeName ?? 'none'}; ${conditions || 'no conditions'})`);
      }
      attempts++;
      const ok = await execInPod(kc, { namespace, pod: name, container: CONTAINER, command: ['true'], timeoutMs: 10_000 }).then(
        (r) => r.exitCode === 0,
        () => false,
      );
      if (ok) realAt = performance.now();
      else await sleep(RETRY_MS);
    }
    const apiAt = await Promise.race([
      running,
      new Promise<never>((_, reject) => deadline.addEventListener('abort', () => reject(new Error(`floor pod ${namespace}/${name}: the watch never showed it running`)), { once: true })),
    ]);
    return { apiMs: apiAt - t0, realMs: realAt - t0, attempts };
  } finally {
    watch.abort();
    await core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 }).catch(() => undefined);
    if (withPvc) await core.deleteNamespacedPersistentVolumeClaim({ namespace, name }).catch(() => undefined);
  }
}
