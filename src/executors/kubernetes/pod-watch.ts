/**
 * The trouble watch over the Pods of live sessions: one label-selected Pod watch per namespace
 * (not one per Pod) reports, once per subscription, a recorded Pod that was deleted, is being
 * deleted, failed or finished, or whose main container restarted. A watch that fails in a way a
 * relist cannot fix (Forbidden …) is retried with a backoff; the namespace's watch ends with its
 * last subscription.
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { pause, type KubeObjects } from './kube/index.js';

interface PodTrouble {
  /** `PodDeleted`, `PodDeleting`, `PodEvicted`, `PodFailed`, `PodCompleted`, `ContainerRestarted` or `OOMKilled` (a restart after an OOM kill). */
  reason: string;
  message: string;
}

export interface WatchedPod {
  podName: string;
  podUid: string;
  mainContainer: string;
  /** The main container's restart count when Berth connected (null: unknown, the first sighting sets it). */
  restartCount: number | null;
}

/** What is wrong with the recorded Pod, given the Pod of that name now (undefined: none), if anything. */
export function podTrouble(w: WatchedPod, namespace: string, pod: V1Pod | undefined): PodTrouble | null {
  const where = `Pod ${namespace}/${w.podName}`;
  if (pod === undefined || pod.metadata?.uid !== w.podUid) return { reason: 'PodDeleted', message: `${where} was deleted` };
  if (pod.metadata?.deletionTimestamp) return { reason: 'PodDeleting', message: `${where} is being deleted` };
  const phase = pod.status?.phase;
  if (phase === 'Failed') {
    const why = pod.status?.reason;
    return { reason: why === 'Evicted' ? 'PodEvicted' : 'PodFailed', message: `${where} failed${why ? ` (${why}${pod.status?.message ? `: ${pod.status.message}` : ''})` : ''}` };
  }
  if (phase === 'Succeeded') return { reason: 'PodCompleted', message: `${where} completed` };
  const main = pod.status?.containerStatuses?.find((c) => c.name === w.mainContainer);
  const restarts = main?.restartCount;
  if (w.restartCount !== null && restarts !== undefined && restarts > w.restartCount) {
    const count = `${restarts} restarts, ${w.restartCount} when Berth connected`;
    const last = main?.lastState?.terminated;
    if (last?.reason === 'OOMKilled') {
      return {
        reason: 'OOMKilled',
        message: `${where}: its main container was killed for going over its memory limit (OOMKilled, exit code ${last.exitCode}; ${count}); raise resources.limits.memory of the main container in the profile's pod_template`,
      };
    }
    const why = last ? ` after it ended (${last.reason ?? 'terminated'}, exit code ${last.exitCode}${last.signal ? `, signal ${last.signal}` : ''})` : '';
    return { reason: 'ContainerRestarted', message: `${where}: its main container restarted${why} (${count})` };
  }
  return null;
}

interface Subscription extends WatchedPod {
  onTrouble: (t: PodTrouble) => void;
  fired: boolean;
}

interface NamespaceWatch {
  subs: Set<Subscription>;
  abort: AbortController;
  /** The Pods as last seen (by name), and the UIDs seen deleted: a late subscriber is checked against the latter. */
  pods: Map<string, V1Pod>;
  gone: Set<string>;
}

/** How many deleted UIDs a namespace watch remembers. */
const MAX_GONE = 1000;

const MAX_BACKOFF_MS = 60_000;

export class PodWatches {
  readonly #byNamespace = new Map<string, NamespaceWatch>();
  readonly #client: () => KubeObjects;
  readonly #labelSelector: string;
  readonly #log: Logger;

  constructor(client: () => KubeObjects, labelSelector: string, log: Logger) {
    this.#client = client;
    this.#labelSelector = labelSelector;
    this.#log = log;
  }

  /** Reports trouble of `pod` in `namespace` once; the returned function ends the subscription. */
  watch(namespace: string, pod: WatchedPod, onTrouble: (t: PodTrouble) => void): () => void {
    const sub: Subscription = { ...pod, onTrouble, fired: false };
    let ns = this.#byNamespace.get(namespace);
    if (!ns) {
      const created: NamespaceWatch = { subs: new Set(), abort: new AbortController(), pods: new Map(), gone: new Set() };
      this.#byNamespace.set(namespace, created);
      void this.#run(namespace, created);
      ns = created;
    }
    ns.subs.add(sub);
    const entry = ns;
    // A subscriber that arrives after its Pod's DELETED event (a heal re-watching while the Pod went)
    // would wait forever: tell it at once, once the caller has the handle. (A Pod still being
    // deleted is not reported again: its DELETED event is still to come.)
    queueMicrotask(() => {
      if (entry.subs.has(sub) && entry.gone.has(sub.podUid)) this.#check(namespace, sub, undefined);
    });
    return () => {
      entry.subs.delete(sub);
      if (entry.subs.size === 0 && this.#byNamespace.get(namespace) === entry) {
        this.#byNamespace.delete(namespace);
        entry.abort.abort();
      }
    };
  }

  close(): void {
    for (const ns of this.#byNamespace.values()) ns.abort.abort();
    this.#byNamespace.clear();
  }

  async #run(namespace: string, ns: NamespaceWatch): Promise<void> {
    const { signal } = ns.abort;
    let failures = 0;
    while (!signal.aborted) {
      try {
        await this.#client().watchPods(
          namespace,
          this.#labelSelector,
          {
            onList: (pods) => {
              failures = 0;
              const listed = new Set(pods.map((p) => p.metadata?.uid));
              for (const old of ns.pods.values()) if (!listed.has(old.metadata?.uid)) remember(ns, old.metadata?.uid);
              ns.pods = new Map(pods.map((p) => [p.metadata?.name ?? '', p]));
              for (const sub of ns.subs) this.#check(namespace, sub, pods.find((p) => p.metadata?.name === sub.podName));
            },
            onEvent: (type, pod) => {
              const name = pod.metadata?.name ?? '';
              if (type === 'DELETED') {
                if (ns.pods.get(name)?.metadata?.uid === pod.metadata?.uid) ns.pods.delete(name);
                remember(ns, pod.metadata?.uid);
              } else {
                ns.pods.set(name, pod);
              }
              for (const sub of ns.subs) {
                // only the recorded Pod counts (another Pod under its name is a replacement's)
                if (pod.metadata?.name !== sub.podName || pod.metadata?.uid !== sub.podUid) continue;
                this.#check(namespace, sub, type === 'DELETED' ? undefined : pod);
              }
            },
          },
          signal,
          { onRetry: (err) => this.#log.debug({ namespace, err: err.message }, 'pod watch: relisting') },
        );
      } catch (err) {
        if (signal.aborted) return;
        failures++;
        const delay = Math.min(1000 * 2 ** failures, MAX_BACKOFF_MS);
        this.#log.warn({ namespace, err: errorMessage(err), retryInMs: delay }, 'pod watch failed; retrying');
        await pause(delay, signal);
      }
    }
  }

  #check(namespace: string, sub: Subscription, pod: V1Pod | undefined): void {
    if (sub.fired) return;
    if (sub.restartCount === null && pod?.metadata?.uid === sub.podUid) {
      sub.restartCount = pod.status?.containerStatuses?.find((c) => c.name === sub.mainContainer)?.restartCount ?? 0;
    }
    const trouble = podTrouble(sub, namespace, pod);
    if (trouble === null) return;
    sub.fired = true;
    try {
      sub.onTrouble(trouble);
    } catch (err) {
      this.#log.warn({ namespace, pod: sub.podName, err: errorMessage(err) }, 'pod watch: trouble handler failed');
    }
  }
}

function remember(ns: NamespaceWatch, uid: string | undefined): void {
  if (uid === undefined) return;
  ns.gone.add(uid);
  if (ns.gone.size > MAX_GONE) ns.gone.delete(ns.gone.values().next().value as string);
}
