// watchPod / watchEvents against the real test cluster, as the executor's ServiceAccount: phases as
// they happen, deletion reported, and a watch whose connection is cut relists and keeps reporting.
import { CoreV1Api } from '@kubernetes/client-node';
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createKubeClient,
  createPod,
  deletePod,
  isForbidden,
  KubeApiError,
  watchEvents,
  watchPod,
} from '../../src/executors/kubernetes/kube/index.js';
import type { ObjectEvent } from '../../src/executors/kubernetes/kube/index.js';
import { clusterEnv, restrictedPod, waitFor, waitForPodRunning } from './support/index.js';
import { connectionFor, executorFixture } from './support/executor-client.js';
import type { ExecutorFixture } from './support/executor-client.js';
import { createExecutorServiceAccount } from './support/service-account.js';
import { startTcpProxy } from './support/tcp-proxy.js';
import type { TcpProxy } from './support/tcp-proxy.js';

const env = clusterEnv();

function label(event: ObjectEvent<V1Pod>): string {
  const pod = event.object;
  if (!pod) return `${event.type}:absent`;
  const running = pod.status?.containerStatuses?.some((c) => c.state?.running) ? '+running' : '';
  return `${event.type}:${pod.status?.phase ?? '?'}${running}`;
}

describe('watchPod and watchEvents', () => {
  let fx: ExecutorFixture;
  let proxy: TcpProxy;

  beforeAll(async () => {
    fx = await executorFixture('kube-watch');
    proxy = await startTcpProxy(fx.admin.getCurrentCluster()?.server ?? '');
  });

  afterAll(async () => {
    await proxy?.close();
    await fx?.cleanup();
  });

  it('reports absence, then Pending -> Running, then the deletion', async () => {
    const name = 'phases';
    const events: ObjectEvent<V1Pod>[] = [];
    const controller = new AbortController();
    const watching = watchPod(fx.client, fx.ns.name, name, (e) => events.push(e), controller.signal);
    try {
      await waitFor('the first SYNC', () => (events.length > 0 ? true : undefined), { timeoutMs: 10_000, intervalMs: 20 });
      expect(events[0]).toEqual({ type: 'SYNC', object: undefined });

      const created = await createPod(fx.client, fx.ns.name, restrictedPod({ name, image: env.busyboxImage, command: ['sleep', '3600'] }));
      await waitFor('Running', () => (events.some((e) => label(e).endsWith('Running+running')) ? true : undefined), { timeoutMs: 60_000, intervalMs: 20 });
      const uid = created.metadata?.uid ?? '';
      await deletePod(fx.client, fx.ns.name, name, { uid }, AbortSignal.timeout(60_000));
      await waitFor('DELETED', () => (events.some((e) => e.type === 'DELETED') ? true : undefined), { timeoutMs: 30_000, intervalMs: 20 });
    } finally {
      controller.abort();
      await watching;
    }
    const labels = events.map(label);
    expect(labels[1], labels.join(', ')).toBe('ADDED:Pending');
    expect(labels.indexOf('MODIFIED:Running+running'), labels.join(', ')).toBeGreaterThan(1);
    const deleted = events.find((e) => e.type === 'DELETED');
    expect(deleted?.object?.metadata?.name).toBe(name);
  });

  it('relists after its connection is cut and keeps reporting changes', async () => {
    const name = 'cut';
    await createPod(fx.client, fx.ns.name, restrictedPod({ name, image: env.busyboxImage, command: ['sleep', '3600'] }));
    await waitForPodRunning(fx.admin, fx.ns.name, name);

    // The same ServiceAccount, reaching the API server through a proxy the test can cut.
    const sa = await createExecutorServiceAccount(fx.admin, fx.ns.name, { suffix: 'proxied', server: proxy.server });
    const client = createKubeClient(connectionFor(sa.kubeconfigPath, fx.ns.name));
    const events: ObjectEvent<V1Pod>[] = [];
    const retries: KubeApiError[] = [];
    const controller = new AbortController();
    const watching = watchPod(client, fx.ns.name, name, (e) => events.push(e), controller.signal, { onRetry: (e) => retries.push(e) });
    try {
      await waitFor('the first SYNC and an open watch', () => (events.length === 1 && proxy.open() > 0 ? true : undefined), {
        timeoutMs: 10_000,
        intervalMs: 20,
      });
      // The first SYNC can come while only the list's keep-alive connection is open, with the watch's
      // own connection still being set up: a cut then misses the watch. So cut again, every 500 ms,
      // until the watch notices (a watch that never relists still fails here).
      await waitFor(
        'a relist',
        () => {
          if (events.filter((e) => e.type === 'SYNC').length >= 2) return true;
          proxy.cutAll();
          return undefined;
        },
        { timeoutMs: 10_000, intervalMs: 500 },
      );

      // A change after the cut still arrives (from the new watch).
      await fx.admin.makeApiClient(CoreV1Api).patchNamespacedPod(
        { name, namespace: fx.ns.name, body: [{ op: 'add', path: '/metadata/labels/changed', value: 'after-cut' }] },
      );
      await waitFor('the change', () => (events.some((e) => e.object?.metadata?.labels?.changed === 'after-cut') ? true : undefined), {
        timeoutMs: 10_000,
        intervalMs: 20,
      });
    } finally {
      controller.abort();
      await watching;
      await sa.cleanup();
    }
    expect(events.every((e) => e.object?.metadata?.name === name)).toBe(true);
    expect(events.filter((e) => e.type === 'DELETED')).toEqual([]);
  });

  it('reports the Events of one object by UID', async () => {
    const name = 'events';
    const created = await createPod(fx.client, fx.ns.name, restrictedPod({ name, image: env.busyboxImage, command: ['sleep', '3600'] }));
    const uid = created.metadata?.uid ?? '';
    const seen: CoreV1Event[] = [];
    const controller = new AbortController();
    const watching = watchEvents(fx.client, fx.ns.name, uid, (e) => seen.push(e), controller.signal);
    try {
      await waitFor('Scheduled and Started', () => (['Scheduled', 'Started'].every((r) => seen.some((e) => e.reason === r)) ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 20,
      });
    } finally {
      controller.abort();
      await watching;
    }
    expect(seen.every((e) => e.involvedObject.uid === uid)).toBe(true);
    const reasons = seen.map((e) => e.reason);
    expect(reasons.indexOf('Scheduled'), reasons.join(', ')).toBeLessThan(reasons.indexOf('Started'));
    // Each report is a new Event or a new version of one (a repeated Event is updated in place).
    const versions = seen.map((e) => `${e.metadata?.uid}@${e.metadata?.resourceVersion}`);
    expect(new Set(versions).size, versions.join(', ')).toBe(seen.length);
  });

  it('rejects with Forbidden outside the namespace the Role covers', async () => {
    const controller = new AbortController();
    const err = await watchPod(fx.client, 'default', 'anything', () => undefined, controller.signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KubeApiError);
    expect(isForbidden(err)).toBe(true);
    expect((err as KubeApiError).message).toContain(fx.sa.username);
  });
});
