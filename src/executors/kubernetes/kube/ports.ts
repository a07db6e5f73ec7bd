/**
 * The narrow ports through which the executor's launch, resume, stop, rm and sweep code reaches the
 * cluster: the object operations it uses (Pods and PVCs: read, create, delete with preconditions,
 * list by label; watches of one object, of labelled Pods and of an object's Events), exec into a
 * container, port-forward to a Pod, and writing Events about its objects. {@link kubePorts} is the real implementation over
 * client-node (objects.ts, watch.ts, exec.ts, forward.ts); unit tests use recording fakes
 * (../testing/fake-kube.ts). Nothing outside kube/ sees client-node's API classes.
 * @module
 */
import type { CoreV1Event, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from './client.js';
import { execInContainer, type ExecOptions, type ExecResult } from './exec.js';
import { openForward, type ForwardTarget, type OpenForwardOptions, type PortForwardSession } from './forward.js';
import { eventWriter, type EventRecord } from './events.js';
import { createPod, createPvc, deletePod, deletePvc, getPod, getPvc, listPods, listPvcs } from './objects.js';
import type { CreateOptions, DeleteOutcome, DeletePreconditions, Listing } from './objects.js';
import { watchEvents, watchPod, watchPods, watchPvc, type ObjectEvent, type WatchOptions } from './watch.js';
import { relabelPod, relabelPvc, type LabelChanges, type RelabelTarget } from './relabel.js';
import { liftSchedulingGate, type GateTarget } from './gate.js';
import { kubePolicies, type KubePolicies } from './policies.js';

/** Handlers of a label-selected Pod watch: every matching Pod at each (re)list, then each change. */
export interface PodListHandlers {
  onList: (pods: V1Pod[]) => void;
  onEvent: (type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: V1Pod) => void;
}

/**
 * The Pod and PVC operations of the executor. Reads return undefined for an absent object; a delete
 * goes ahead only while the object still has `preconditions` (UID, and resourceVersion when given)
 * and resolves once it is gone; every failure is a KubeApiError. Watches resolve when `signal`
 * aborts and reject on a failure a relist cannot fix.
 */
export interface KubeObjects {
  getPod(namespace: string, name: string, signal?: AbortSignal): Promise<V1Pod | undefined>;
  createPod(namespace: string, pod: V1Pod, opts?: CreateOptions): Promise<V1Pod>;
  deletePod(namespace: string, name: string, preconditions: DeletePreconditions, signal: AbortSignal): Promise<DeleteOutcome>;
  listPods(namespace: string, labelSelector: string, signal: AbortSignal): Promise<Listing<V1Pod>>;
  getPvc(namespace: string, name: string, signal?: AbortSignal): Promise<V1PersistentVolumeClaim | undefined>;
  createPvc(namespace: string, pvc: V1PersistentVolumeClaim, opts?: CreateOptions): Promise<V1PersistentVolumeClaim>;
  deletePvc(namespace: string, name: string, preconditions: DeletePreconditions, signal: AbortSignal): Promise<DeleteOutcome>;
  listPvcs(namespace: string, labelSelector: string, signal: AbortSignal): Promise<Listing<V1PersistentVolumeClaim>>;
  /** Rewrites the labels of exactly the object read (UID and resourceVersion pinned; relabel.ts). */
  relabelPod(target: RelabelTarget, labels: LabelChanges, signal?: AbortSignal): Promise<V1Pod>;
  relabelPvc(target: RelabelTarget, labels: LabelChanges, signal?: AbortSignal): Promise<V1PersistentVolumeClaim>;
  /** Removes scheduling gate `gate` of exactly the Pod read (UID and gate list tested; gate.ts). */
  liftSchedulingGate(target: GateTarget, gate: string, signal?: AbortSignal): Promise<V1Pod>;
  watchPod(namespace: string, name: string, onEvent: (event: ObjectEvent<V1Pod>) => void, signal: AbortSignal, opts?: WatchOptions): Promise<void>;
  watchPvc(namespace: string, name: string, onEvent: (event: ObjectEvent<V1PersistentVolumeClaim>) => void, signal: AbortSignal, opts?: WatchOptions): Promise<void>;
  watchPods(namespace: string, labelSelector: string, handlers: PodListHandlers, signal: AbortSignal, opts?: WatchOptions): Promise<void>;
  /** Each Event about the object with `uid` (listed, then watched), once per new Event or change of it. */
  watchEvents(namespace: string, uid: string, onEvent: (event: CoreV1Event) => void, signal: AbortSignal, opts?: WatchOptions): Promise<void>;
}

/** One command in a container: its exit code and output tails, whatever the exit code (see execInContainer). */
export interface KubeExec {
  exec(opts: ExecOptions): Promise<ExecResult>;
}

/** A loopback listener forwarding each connection to a port of a Pod (see openForward). */
export interface KubePortForward {
  open(target: ForwardTarget, opts?: OpenForwardOptions): Promise<PortForwardSession>;
}

/**
 * Writes an Event (events.k8s.io/v1) about one of the executor's objects; rejects with a
 * KubeApiError (`Forbidden` when the Role lacks `create` on events.k8s.io events).
 */
export interface KubeEvents {
  create(record: EventRecord, signal: AbortSignal): Promise<void>;
}

/** Everything the executor does to a cluster. */
export interface KubePorts {
  readonly objects: KubeObjects;
  readonly exec: KubeExec;
  readonly forward: KubePortForward;
  readonly events: KubeEvents;
  /** NetworkPolicies (a session's egress policy). */
  readonly policies: KubePolicies;
}

/** The ports over a real client. */
export function kubePorts(client: KubeClient): KubePorts {
  const objects: KubeObjects = {
    getPod: (namespace, name, signal) => getPod(client, namespace, name, signal),
    createPod: (namespace, pod, opts) => createPod(client, namespace, pod, opts),
    deletePod: (namespace, name, preconditions, signal) => deletePod(client, namespace, name, preconditions, signal),
    listPods: (namespace, labelSelector, signal) => listPods(client, namespace, labelSelector, signal),
    getPvc: (namespace, name, signal) => getPvc(client, namespace, name, signal),
    createPvc: (namespace, pvc, opts) => createPvc(client, namespace, pvc, opts),
    deletePvc: (namespace, name, preconditions, signal) => deletePvc(client, namespace, name, preconditions, signal),
    listPvcs: (namespace, labelSelector, signal) => listPvcs(client, namespace, labelSelector, signal),
    relabelPod: (target, labels, signal) => relabelPod(client, target, labels, signal),
    relabelPvc: (target, labels, signal) => relabelPvc(client, target, labels, signal),
    liftSchedulingGate: (target, gate, signal) => liftSchedulingGate(client, target, gate, signal),
    watchPod: (namespace, name, onEvent, signal, opts) => watchPod(client, namespace, name, onEvent, signal, opts),
    watchPvc: (namespace, name, onEvent, signal, opts) => watchPvc(client, namespace, name, onEvent, signal, opts),
    watchPods: (namespace, labelSelector, handlers, signal, opts) => watchPods(client, namespace, labelSelector, handlers, signal, opts),
    watchEvents: (namespace, uid, onEvent, signal, opts) => watchEvents(client, namespace, uid, onEvent, signal, opts),
  };
  return {
    objects,
    exec: { exec: (opts) => execInContainer(client, opts) },
    forward: { open: (target, opts) => openForward(client, target, opts) },
    events: { create: eventWriter(client) },
    policies: kubePolicies(client),
  };
}
