/**
 * The Pod and PVC calls of the executor: get (absent → undefined), create (optionally a
 * server-side dry run, for doctor), list by label (with the API server's clock), and delete by
 * UID + resourceVersion preconditions followed by a watch until the object is gone (NotFound, or
 * the name now belongs to another UID).
 * @module
 */
import { Observable } from '@kubernetes/client-node';
import type { ObservableMiddleware, RequestContext, ResponseContext, V1DeleteOptions, V1ObjectMeta, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { CallOptions, KubeClient } from './client.js';
import { KubeApiError, isConflict, isNotFound } from './errors.js';
import { watchPod, watchPvc } from './watch.js';
import type { ObjectEvent } from './watch.js';

export interface CreateOptions {
  /** Server-side dry run (`dryRun=All`): admission runs, nothing is stored. */
  dryRun?: boolean;
  signal?: AbortSignal;
}

/** What a delete must find to go ahead (an object changed since it was read is left alone). */
export interface DeletePreconditions {
  uid: string;
  /** Omit to delete whatever version carries `uid`. */
  resourceVersion?: string;
}

/** `deleted`: this call deleted it; `absent`: nothing by that name existed. Both: it is gone now. */
export type DeleteOutcome = 'deleted' | 'absent';

/** What a list by label found, and when by the API server's clock. */
export interface Listing<T> {
  items: T[];
  /** The response's `Date` header (undefined when it sent none). */
  serverDate: string | undefined;
}

export async function getPod(client: KubeClient, namespace: string, name: string, signal?: AbortSignal): Promise<V1Pod | undefined> {
  return orUndefined(client.request(`get pod ${namespace}/${name}`, signal, (o) => client.core.readNamespacedPod({ namespace, name }, o)));
}

export function createPod(client: KubeClient, namespace: string, pod: V1Pod, opts: CreateOptions = {}): Promise<V1Pod> {
  const action = `${opts.dryRun ? 'dry-run create' : 'create'} pod ${namespace}/${pod.metadata?.name ?? pod.metadata?.generateName ?? '?'}`;
  return client.request(action, opts.signal, (o) =>
    client.core.createNamespacedPod({ namespace, body: pod, dryRun: opts.dryRun ? 'All' : undefined }, o),
  );
}

export async function getPvc(client: KubeClient, namespace: string, name: string, signal?: AbortSignal): Promise<V1PersistentVolumeClaim | undefined> {
  return orUndefined(
    client.request(`get pvc ${namespace}/${name}`, signal, (o) => client.core.readNamespacedPersistentVolumeClaim({ namespace, name }, o)),
  );
}

export function createPvc(client: KubeClient, namespace: string, pvc: V1PersistentVolumeClaim, opts: CreateOptions = {}): Promise<V1PersistentVolumeClaim> {
  const action = `${opts.dryRun ? 'dry-run create' : 'create'} pvc ${namespace}/${pvc.metadata?.name ?? '?'}`;
  return client.request(action, opts.signal, (o) =>
    client.core.createNamespacedPersistentVolumeClaim({ namespace, body: pvc, dryRun: opts.dryRun ? 'All' : undefined }, o),
  );
}

/** The Pods of `namespace` that carry `labelSelector`. */
export async function listPods(client: KubeClient, namespace: string, labelSelector: string, signal: AbortSignal): Promise<Listing<V1Pod>> {
  const date = serverDateProbe();
  const list = await client.request(`list pods in ${namespace}`, signal, (o) => client.core.listNamespacedPod({ namespace, labelSelector }, date.options(o)));
  return { items: list.items, serverDate: date.value() };
}

/** The PVCs of `namespace` that carry `labelSelector`. */
export async function listPvcs(client: KubeClient, namespace: string, labelSelector: string, signal: AbortSignal): Promise<Listing<V1PersistentVolumeClaim>> {
  const date = serverDateProbe();
  const list = await client.request(`list pvcs in ${namespace}`, signal, (o) => client.core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector }, date.options(o)));
  return { items: list.items, serverDate: date.value() };
}

/** A response middleware that keeps the `Date` header of the call it is added to. */
function serverDateProbe(): { options: (o: CallOptions) => CallOptions; value: () => string | undefined } {
  let date: string | undefined;
  const probe: ObservableMiddleware = {
    pre: (context: RequestContext) => new Observable(Promise.resolve(context)),
    post: (response: ResponseContext) => {
      date = response.headers.date ?? response.headers.Date;
      return new Observable(Promise.resolve(response));
    },
  };
  return {
    options: (o) => ({ ...o, middleware: [...(o.middleware ?? []), probe], middlewareMergeStrategy: 'append' }),
    value: () => date,
  };
}

/**
 * Deletes the Pod only if it still has `preconditions`, then waits until it is gone. `signal`
 * bounds the whole call, the wait included.
 *
 * The delete is graceful (the Pod's own terminationGracePeriodSeconds): the kubelet sends SIGTERM
 * (SIGKILL after the grace period), unmounts the volumes and only then deletes the object. So once
 * it is gone, nothing of that Pod runs, and a new Pod under its name cannot meet its containers
 * (a delete with grace 0 would make the API forget it while its containers still run).
 * The options go in the body: when a DELETE has one, the API server ignores its query parameters.
 * @throws KubeApiError reason `Conflict` when the Pod changed (another UID or resourceVersion);
 *   reason `ClientTimeout`/`Aborted` when `signal` fired before the Pod was gone.
 */
export function deletePod(client: KubeClient, namespace: string, name: string, preconditions: DeletePreconditions, signal: AbortSignal): Promise<DeleteOutcome> {
  return deleteAndWait(
    client,
    `delete pod ${namespace}/${name}`,
    preconditions,
    signal,
    (body, o) => client.core.deleteNamespacedPod({ namespace, name, body }, o),
    (onEvent, inner) => watchPod(client, namespace, name, onEvent, inner),
  );
}

/**
 * Deletes the PVC only if it still has `preconditions`, then waits until it is gone (a PVC in use
 * by a Pod stays until that Pod is gone: `kubernetes.io/pvc-protection`). Same errors as deletePod.
 */
export function deletePvc(client: KubeClient, namespace: string, name: string, preconditions: DeletePreconditions, signal: AbortSignal): Promise<DeleteOutcome> {
  return deleteAndWait(
    client,
    `delete pvc ${namespace}/${name}`,
    preconditions,
    signal,
    (body, o) => client.core.deleteNamespacedPersistentVolumeClaim({ namespace, name, body }, o),
    (onEvent, inner) => watchPvc(client, namespace, name, onEvent, inner),
  );
}

/** The DELETE (its options in the body) and the wait until the object with the precondition UID is gone. */
async function deleteAndWait<T extends { metadata?: V1ObjectMeta }>(
  client: KubeClient,
  action: string,
  preconditions: DeletePreconditions,
  signal: AbortSignal,
  del: (body: V1DeleteOptions, options: CallOptions) => Promise<unknown>,
  watch: (onEvent: (event: ObjectEvent<T>) => void, inner: AbortSignal) => Promise<void>,
): Promise<DeleteOutcome> {
  try {
    // Background: neither object has dependents to wait for, and Foreground would make the delete
    // wait for the garbage collector to drop its finalizer.
    await client.request(action, signal, (o) => del({ preconditions, propagationPolicy: 'Background' }, o));
  } catch (err) {
    return deleteFailed(err, action, preconditions);
  }
  await waitGone(action, preconditions.uid, signal, watch);
  return 'deleted';
}

function deleteFailed(err: unknown, action: string, preconditions: DeletePreconditions): DeleteOutcome {
  if (isNotFound(err)) return 'absent';
  if (isConflict(err)) {
    // the API's message names both UIDs (kept readable by sanitize(): a UID is not a secret)
    const expected = preconditions.resourceVersion ? 'UID and resourceVersion' : 'UID';
    throw new KubeApiError(`${action}: not deleted: the object changed since it was read (its ${expected} no longer match): ${(err as Error).message}`, {
      status: 409,
      reason: 'Conflict',
      cause: err,
    });
  }
  throw err;
}

/** Resolves once the object with `uid` is gone; the watch reports each state change. */
async function waitGone<T extends { metadata?: V1ObjectMeta }>(
  action: string,
  uid: string,
  signal: AbortSignal,
  watch: (onEvent: (event: ObjectEvent<T>) => void, inner: AbortSignal) => Promise<void>,
): Promise<void> {
  const inner = new AbortController();
  const stop = (): void => inner.abort();
  signal.addEventListener('abort', stop, { once: true });
  let gone = false;
  let last: T | undefined;
  try {
    await watch((event) => {
      const sameObject = event.object?.metadata?.uid === uid;
      if (event.type === 'DELETED' ? sameObject : !sameObject) {
        gone = true; // deleted, absent, or the name now belongs to a replacement
        inner.abort();
      } else {
        last = event.object;
      }
    }, inner.signal);
  } finally {
    signal.removeEventListener('abort', stop);
  }
  if (gone) return;
  const finalizers = last?.metadata?.finalizers ?? [];
  const still = `still present${finalizers.length > 0 ? ` (finalizers: ${finalizers.join(', ')})` : ''}`;
  const timedOut = signal.reason instanceof Error && signal.reason.name === 'TimeoutError';
  throw new KubeApiError(`${action}: ${still} when the wait ended`, { reason: timedOut ? 'ClientTimeout' : 'Aborted', cause: signal.reason });
}

async function orUndefined<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
