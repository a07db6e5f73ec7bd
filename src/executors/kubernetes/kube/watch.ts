/**
 * Watches that survive their connection: LIST (field selector) then WATCH from the list's
 * resourceVersion, and on any end of the watch (server close, cut connection, 410 Gone) a short
 * cancellable pause and a relist. Used for one Pod or PVC by name and for the Events of one object.
 * @module
 */
import { Watch } from '@kubernetes/client-node';
import type { CoreV1Event, V1ObjectMeta, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { CallOptions, KubeClient } from './client.js';
import { KubeApiError, toKubeApiError } from './errors.js';

/** Pause before a relist (spec §4.6: no tight loop). */
const RELIST_DELAY_MS = 100;
const MAX_RETRY_DELAY_MS = 5_000;

export type ObjectEvent<T> =
  /** The state found by a (re)list; `object` undefined: it does not exist. */
  | { type: 'SYNC'; object: T | undefined }
  | { type: 'ADDED' | 'MODIFIED'; object: T }
  /** From the watch, or synthesized when a relist no longer finds the object (or finds another UID). */
  | { type: 'DELETED'; object: T };

export interface WatchOptions {
  /** Called for an error the watch recovers from by relisting (network, 5xx, 410). */
  onRetry?: (err: KubeApiError) => void;
}

interface Listed<T> {
  items: T[];
  resourceVersion: string | undefined;
}

interface HasMeta {
  metadata?: V1ObjectMeta;
}

/**
 * Reports the Pod `namespace/name` until `signal` aborts: a SYNC at start and after each relist,
 * then ADDED/MODIFIED/DELETED. Resolves when aborted.
 * @throws KubeApiError on a failure a relist cannot fix (Forbidden, Unauthorized, bad request).
 */
export function watchPod(
  client: KubeClient,
  namespace: string,
  name: string,
  onPod: (event: ObjectEvent<V1Pod>) => void,
  signal: AbortSignal,
  opts: WatchOptions = {},
): Promise<void> {
  return watchNamed<V1Pod>(client, `/api/v1/namespaces/${namespace}/pods`, `pod ${namespace}/${name}`, name, onPod, signal, opts, (fieldSelector, options) =>
    client.core.listNamespacedPod({ namespace, fieldSelector }, options).then((l) => ({ items: l.items, resourceVersion: l.metadata?.resourceVersion })),
  );
}

/** Like watchPod, for a PersistentVolumeClaim. */
export function watchPvc(
  client: KubeClient,
  namespace: string,
  name: string,
  onPvc: (event: ObjectEvent<V1PersistentVolumeClaim>) => void,
  signal: AbortSignal,
  opts: WatchOptions = {},
): Promise<void> {
  return watchNamed<V1PersistentVolumeClaim>(
    client,
    `/api/v1/namespaces/${namespace}/persistentvolumeclaims`,
    `pvc ${namespace}/${name}`,
    name,
    onPvc,
    signal,
    opts,
    (fieldSelector, options) =>
      client.core
        .listNamespacedPersistentVolumeClaim({ namespace, fieldSelector }, options)
        .then((l) => ({ items: l.items, resourceVersion: l.metadata?.resourceVersion })),
  );
}

/**
 * Reports the Pods of `namespace` that carry `labelSelector` until `signal` aborts: `onList` with
 * every such Pod at start and after each relist, then each ADDED/MODIFIED/DELETED. One watch serves
 * any number of Pods (e.g. every live session of an executor in that namespace).
 */
export function watchPods(
  client: KubeClient,
  namespace: string,
  labelSelector: string,
  handlers: { onList: (pods: V1Pod[]) => void; onEvent: (type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: V1Pod) => void },
  signal: AbortSignal,
  opts: WatchOptions = {},
): Promise<void> {
  return listWatch<V1Pod>({
    client,
    path: `/api/v1/namespaces/${namespace}/pods`,
    what: `pods ${labelSelector} in ${namespace}`,
    fieldSelector: '',
    labelSelector,
    list: (_fieldSelector, options) =>
      client.core.listNamespacedPod({ namespace, labelSelector }, options).then((l) => ({ items: l.items, resourceVersion: l.metadata?.resourceVersion })),
    onList: handlers.onList,
    onEvent: handlers.onEvent,
    signal,
    opts,
  });
}

/**
 * Reports each Event about the object with `uid` (field selector `involvedObject.uid`), once per
 * new Event or change of it (a repeated Event bumps `count`), until `signal` aborts.
 */
export function watchEvents(
  client: KubeClient,
  namespace: string,
  uid: string,
  onEvent: (event: CoreV1Event) => void,
  signal: AbortSignal,
  opts: WatchOptions = {},
): Promise<void> {
  const seen = new Map<string, string | undefined>();
  const report = (event: CoreV1Event): void => {
    const key = event.metadata?.uid ?? `${event.metadata?.name ?? ''}`;
    const version = event.metadata?.resourceVersion;
    if (seen.has(key) && seen.get(key) === version) return;
    seen.set(key, version);
    onEvent(event);
  };
  return listWatch<CoreV1Event>({
    client,
    path: `/api/v1/namespaces/${namespace}/events`,
    what: `events of ${namespace}/${uid}`,
    fieldSelector: `involvedObject.uid=${uid}`,
    list: (fieldSelector, options) =>
      client.core.listNamespacedEvent({ namespace, fieldSelector }, options).then((l) => ({ items: l.items, resourceVersion: l.metadata?.resourceVersion })),
    onList: (items) => items.forEach(report),
    onEvent: (type, event) => {
      if (type !== 'DELETED') report(event);
    },
    signal,
    opts,
  });
}

function watchNamed<T extends HasMeta>(
  client: KubeClient,
  path: string,
  what: string,
  name: string,
  onObject: (event: ObjectEvent<T>) => void,
  signal: AbortSignal,
  opts: WatchOptions,
  list: (fieldSelector: string, options: CallOptions) => Promise<Listed<T>>,
): Promise<void> {
  let last: T | undefined;
  return listWatch<T>({
    client,
    path,
    what,
    fieldSelector: `metadata.name=${name}`,
    list,
    onList: (items) => {
      const current = items.find((o) => o.metadata?.name === name);
      if (last && (!current || current.metadata?.uid !== last.metadata?.uid)) onObject({ type: 'DELETED', object: last });
      last = current;
      onObject({ type: 'SYNC', object: current });
    },
    onEvent: (type, object) => {
      if (object.metadata?.name !== name) return;
      last = type === 'DELETED' ? undefined : object;
      onObject({ type, object });
    },
    signal,
    opts,
  });
}

interface ListWatchSpec<T> {
  client: KubeClient;
  path: string;
  what: string;
  fieldSelector: string;
  /** Narrows the watch (the list applies it itself). */
  labelSelector?: string;
  list: (fieldSelector: string, options: CallOptions) => Promise<Listed<T>>;
  onList: (items: T[]) => void;
  onEvent: (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: T) => void;
  signal: AbortSignal;
  opts: WatchOptions;
}

/** The loop: list, watch until it ends, pause, relist. Resolves when `signal` aborts. */
async function listWatch<T extends HasMeta>(spec: ListWatchSpec<T>): Promise<void> {
  const { client, signal } = spec;
  let failures = 0;
  while (!signal.aborted) {
    let resourceVersion: string | undefined;
    try {
      const listed = await client.request(`list ${spec.what}`, signal, (options) => spec.list(spec.fieldSelector, options));
      resourceVersion = listed.resourceVersion;
      spec.onList(listed.items);
    } catch (err) {
      if (signal.aborted) return;
      const error = toKubeApiError(err, `list ${spec.what}`);
      if (!isRetriable(error)) throw error;
      spec.opts.onRetry?.(error);
      failures++;
      await pause(Math.min(RELIST_DELAY_MS * 2 ** failures, MAX_RETRY_DELAY_MS), signal);
      continue;
    }
    // onList may itself have ended the watch (e.g. a deletion wait that found the object gone).
    if (signal.aborted) return;
    const ended = await watchOnce(spec, resourceVersion);
    if (signal.aborted) return;
    if (ended.error) {
      if (!isRetriable(ended.error)) throw ended.error;
      spec.opts.onRetry?.(ended.error);
    }
    failures = ended.sawEvents ? 0 : failures + 1;
    // A watch that keeps ending at once (and a 410) backs off; a normal close relists after 100 ms.
    await pause(failures <= 1 ? RELIST_DELAY_MS : Math.min(RELIST_DELAY_MS * 2 ** failures, MAX_RETRY_DELAY_MS), signal);
  }
}

/** One WATCH from `resourceVersion`; resolves when it ends (never rejects). */
function watchOnce<T extends HasMeta>(spec: ListWatchSpec<T>, resourceVersion: string | undefined): Promise<{ error?: KubeApiError; sawEvents: boolean }> {
  const { client, signal } = spec;
  return new Promise((resolve) => {
    // An abort listener added to an aborted signal never runs: the watch would never end.
    if (signal.aborted) return resolve({ sawEvents: false });
    let settled = false;
    let sawEvents = false;
    let controller: AbortController | undefined;
    const finish = (error?: KubeApiError): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      controller?.abort();
      resolve({ error, sawEvents });
    };
    const onAbort = (): void => finish();
    signal.addEventListener('abort', onAbort, { once: true });

    const query = {
      ...(spec.fieldSelector !== '' ? { fieldSelector: spec.fieldSelector } : {}),
      ...(spec.labelSelector !== undefined ? { labelSelector: spec.labelSelector } : {}),
      resourceVersion,
      allowWatchBookmarks: true,
    };
    new Watch(client.kubeConfig)
      .watch(
        spec.path,
        query,
        (type: string, object: unknown) => {
          if (settled) return;
          if (type === 'ERROR') {
            // An in-stream Status: 410 Gone (resourceVersion too old) and the like: relist.
            const status = object as { code?: number; reason?: string; message?: string };
            finish(
              new KubeApiError(`watch ${spec.what}: ${status.message ?? 'error event'}`, {
                status: status.code,
                reason: status.reason ?? (status.code === 410 ? 'Gone' : 'Unknown'),
              }),
            );
            return;
          }
          if (type === 'BOOKMARK') return;
          if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
          sawEvents = true;
          spec.onEvent(type, object as T);
        },
        (err: unknown) => {
          // Called once when the stream ends: null for a clean close, an Error for a cut or a refusal.
          if (settled) return;
          finish(err ? toKubeApiError(err, `watch ${spec.what}`) : undefined);
        },
      )
      .then(
        (c) => {
          controller = c;
          if (settled) c.abort();
        },
        (err: unknown) => finish(toKubeApiError(err, `watch ${spec.what}`)),
      );
  });
}

/** Errors a relist can fix: a cut or refused connection, timeouts, 5xx, 429, 410. */
function isRetriable(err: KubeApiError): boolean {
  if (err.status === undefined) return err.reason !== 'Unknown' || /socket|ECONN|EPIPE|terminated|premature|aborted/i.test(err.message);
  return err.status === 410 || err.status === 429 || err.status >= 500;
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    timer.unref?.();
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
