/**
 * Test support (never imported by shipped code): a recording, in-memory fake of the object port
 * (kube/ports.ts) that behaves like a small API server — UIDs and resourceVersions, 409
 * AlreadyExists, deletes guarded by UID + resourceVersion preconditions (409 Conflict), label
 * selectors, and watches that report a SYNC and then every change — plus a kubelet stand-in that
 * schedules and starts each created Pod on the next tick. Every call is recorded in order in
 * {@link FakeKubeObjects.calls}; faults are injected per operation with {@link FakeKubeObjects.failOn}.
 * @module
 */
import type { CoreV1Event, V1ObjectMeta, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { KubeApiError } from '../kube/index.js';
import type { CreateOptions, DeleteOutcome, DeletePreconditions, GateTarget, KubeObjects, LabelChanges, Listing, ObjectEvent, PodListHandlers, RelabelTarget } from '../kube/index.js';

export type FakeKind = 'Pod' | 'PVC';

type Op = 'get' | 'create' | 'delete' | 'list' | 'watch' | 'relabel' | 'liftGate';

/** One call of the port, as made. */
export interface ObjectCall {
  op: `${Op}${FakeKind}` | 'listPods' | 'listPvcs' | 'watchPods' | 'watchEvents';
  namespace: string;
  /** The object's name (get, create, delete, watch of one object). */
  name?: string;
  preconditions?: DeletePreconditions;
  dryRun?: boolean;
  labelSelector?: string;
  /** watchEvents: the involved object's UID. */
  uid?: string;
  /** A create that succeeded: the UID given to the object. */
  created?: string;
  /** liftGatePod: the gate lifted and the gate list the patch tested. */
  gate?: string;
  gates?: readonly string[];
}

type Obj = V1Pod | V1PersistentVolumeClaim;

interface Watcher {
  kind: FakeKind | 'Pods' | 'Events';
  namespace: string;
  /** Object name (one object), label selector (Pods) or involved UID (Events). */
  key: string;
  notify: (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: unknown) => void;
}

interface Fault {
  op: ObjectCall['op'];
  when: (call: ObjectCall) => boolean;
  error: () => Error;
  times: number;
}

/** A KubeApiError as the API server would send it. */
export function apiError(status: number, reason: string, message: string): KubeApiError {
  return new KubeApiError(message, { status, reason });
}

const clone = <T>(o: T): T => structuredClone(o);

/** The API server's clock as objects carry it: whole seconds. */
const now = (): Date => new Date(Math.floor(Date.now() / 1000) * 1000);

function matchesSelector(labels: Record<string, string> | undefined, selector: string): boolean {
  return selector
    .split(',')
    .filter((p) => p !== '')
    .every((pair) => {
      const [k, v] = pair.split('=');
      return k !== undefined && labels?.[k] === v;
    });
}

export class FakeKubeObjects implements KubeObjects {
  /** Every call, in order. */
  readonly calls: ObjectCall[] = [];
  /**
   * What the kubelet does with a created Pod, on the next tick (a Pod created with scheduling gates:
   * once its last gate is lifted): by default schedule it and start every container. Replace it to
   * keep a Pod pending or fail it.
   */
  onPodCreated: (pod: V1Pod) => void = (pod) => this.startPod(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');
  /** What a created PVC looks like: by default Bound at once. */
  onPvcCreated: (pvc: V1PersistentVolumeClaim) => void = (pvc) => {
    pvc.status = { phase: 'Bound' };
    pvc.spec = { ...pvc.spec, volumeName: `pv-${pvc.metadata?.uid ?? ''}` };
  };
  readonly #objects = new Map<string, Obj>();
  readonly #watchers = new Set<Watcher>();
  readonly #faults: Fault[] = [];
  #uid = 0;
  #version = 100;

  /** Makes the next `times` calls of `op` (matching `when`) fail with `error`. */
  failOn(op: ObjectCall['op'], error: Error | (() => Error), opts: { times?: number; when?: (call: ObjectCall) => boolean } = {}): void {
    this.#faults.push({ op, error: typeof error === 'function' ? error : () => error, times: opts.times ?? Number.POSITIVE_INFINITY, when: opts.when ?? (() => true) });
  }

  /** The calls of one operation (e.g. every `deletePod`). */
  callsOf(op: ObjectCall['op']): ObjectCall[] {
    return this.calls.filter((c) => c.op === op);
  }

  /** The stored object, or undefined. */
  find(kind: 'Pod', namespace: string, name: string): V1Pod | undefined;
  find(kind: 'PVC', namespace: string, name: string): V1PersistentVolumeClaim | undefined;
  find(kind: FakeKind, namespace: string, name: string): Obj | undefined {
    const o = this.#objects.get(`${kind}/${namespace}/${name}`);
    return o === undefined ? undefined : clone(o);
  }

  /** Stores an object as someone else would (a foreign one, or a recorded one); returns it with its UID. */
  put(kind: 'Pod', obj: V1Pod): V1Pod;
  put(kind: 'PVC', obj: V1PersistentVolumeClaim): V1PersistentVolumeClaim;
  put(kind: FakeKind, obj: Obj): Obj {
    const meta = obj.metadata ?? {};
    const stored = clone({ ...obj, metadata: { ...meta, uid: meta.uid ?? this.#nextUid(kind), resourceVersion: this.#nextVersion(), creationTimestamp: meta.creationTimestamp ?? now() } });
    const existed = this.#objects.has(this.#key(kind, stored.metadata));
    this.#objects.set(this.#key(kind, stored.metadata), stored);
    this.#emit(kind, existed ? 'MODIFIED' : 'ADDED', stored);
    return clone(stored);
  }

  /** Changes a stored object in place (a controller or the kubelet at work) and tells the watches. */
  update(kind: FakeKind, namespace: string, name: string, change: (obj: V1Pod & V1PersistentVolumeClaim) => void): void {
    const obj = this.#objects.get(`${kind}/${namespace}/${name}`);
    if (obj === undefined) throw new Error(`fake: no ${kind} ${namespace}/${name}`);
    change(obj as V1Pod & V1PersistentVolumeClaim);
    obj.metadata = { ...obj.metadata, resourceVersion: this.#nextVersion() };
    this.#emit(kind, 'MODIFIED', obj);
  }

  /** Removes an object without preconditions (someone else deleted it). */
  remove(kind: FakeKind, namespace: string, name: string): void {
    const key = `${kind}/${namespace}/${name}`;
    const obj = this.#objects.get(key);
    if (obj === undefined) return;
    this.#objects.delete(key);
    this.#emit(kind, 'DELETED', obj);
  }

  /** The kubelet: binds the Pod to a node and runs every container. */
  startPod(namespace: string, name: string): void {
    if (this.find('Pod', namespace, name) === undefined) return;
    this.update('Pod', namespace, name, (pod) => {
      pod.spec = { ...pod.spec, containers: pod.spec?.containers ?? [], nodeName: 'node-1' };
      pod.status = {
        phase: 'Running',
        conditions: [{ type: 'PodScheduled', status: 'True' }],
        containerStatuses: (pod.spec.containers ?? []).map((c) => ({
          name: c.name,
          image: c.image ?? '',
          imageID: `${c.image ?? ''}@sha256:0`,
          ready: true,
          restartCount: 0,
          started: true,
          state: { running: { startedAt: new Date() } },
        })),
      };
    });
  }

  /** Reports an Event about the object with `uid` to the Event watches. */
  emitEvent(namespace: string, uid: string, event: Omit<CoreV1Event, 'involvedObject' | 'metadata'>): void {
    const full: CoreV1Event = { ...event, metadata: { name: `ev-${this.#nextVersion()}`, namespace }, involvedObject: { uid } };
    for (const w of this.#watchers) if (w.kind === 'Events' && w.namespace === namespace && w.key === uid) w.notify('ADDED', full);
  }

  getPod(namespace: string, name: string): Promise<V1Pod | undefined> {
    return this.#get('Pod', namespace, name) as Promise<V1Pod | undefined>;
  }

  createPod(namespace: string, pod: V1Pod, opts: CreateOptions = {}): Promise<V1Pod> {
    return this.#create('Pod', namespace, pod, opts);
  }

  deletePod(namespace: string, name: string, preconditions: DeletePreconditions): Promise<DeleteOutcome> {
    return this.#delete('Pod', namespace, name, preconditions);
  }

  listPods(namespace: string, labelSelector: string): Promise<Listing<V1Pod>> {
    return this.#list('Pod', namespace, labelSelector) as Promise<Listing<V1Pod>>;
  }

  getPvc(namespace: string, name: string): Promise<V1PersistentVolumeClaim | undefined> {
    return this.#get('PVC', namespace, name) as Promise<V1PersistentVolumeClaim | undefined>;
  }

  createPvc(namespace: string, pvc: V1PersistentVolumeClaim, opts: CreateOptions = {}): Promise<V1PersistentVolumeClaim> {
    return this.#create('PVC', namespace, pvc, opts);
  }

  deletePvc(namespace: string, name: string, preconditions: DeletePreconditions): Promise<DeleteOutcome> {
    return this.#delete('PVC', namespace, name, preconditions);
  }

  listPvcs(namespace: string, labelSelector: string): Promise<Listing<V1PersistentVolumeClaim>> {
    return this.#list('PVC', namespace, labelSelector) as Promise<Listing<V1PersistentVolumeClaim>>;
  }

  relabelPod(target: RelabelTarget, labels: LabelChanges): Promise<V1Pod> {
    return this.#relabel('Pod', target, labels) as Promise<V1Pod>;
  }

  relabelPvc(target: RelabelTarget, labels: LabelChanges): Promise<V1PersistentVolumeClaim> {
    return this.#relabel('PVC', target, labels) as Promise<V1PersistentVolumeClaim>;
  }

  liftSchedulingGate(target: GateTarget, gate: string): Promise<V1Pod> {
    return this.#liftGate(target, gate);
  }

  watchPod(namespace: string, name: string, onEvent: (event: ObjectEvent<V1Pod>) => void, signal: AbortSignal): Promise<void> {
    return this.#watchOne('Pod', namespace, name, onEvent as (event: ObjectEvent<Obj>) => void, signal);
  }

  watchPvc(namespace: string, name: string, onEvent: (event: ObjectEvent<V1PersistentVolumeClaim>) => void, signal: AbortSignal): Promise<void> {
    return this.#watchOne('PVC', namespace, name, onEvent as (event: ObjectEvent<Obj>) => void, signal);
  }

  async watchPods(namespace: string, labelSelector: string, handlers: PodListHandlers, signal: AbortSignal): Promise<void> {
    await this.#record({ op: 'watchPods', namespace, labelSelector });
    const list = (): V1Pod[] => [...this.#objects.entries()].filter(([k, o]) => k.startsWith(`Pod/${namespace}/`) && matchesSelector(o.metadata?.labels, labelSelector)).map(([, o]) => clone(o) as V1Pod);
    return this.#watch({ kind: 'Pods', namespace, key: labelSelector, notify: (type, o) => handlers.onEvent(type, clone(o as V1Pod)) }, () => handlers.onList(list()), signal);
  }

  async watchEvents(namespace: string, uid: string, onEvent: (event: CoreV1Event) => void, signal: AbortSignal): Promise<void> {
    await this.#record({ op: 'watchEvents', namespace, uid });
    return this.#watch({ kind: 'Events', namespace, key: uid, notify: (_type, e) => onEvent(e as CoreV1Event) }, () => undefined, signal);
  }

  async #record(call: ObjectCall): Promise<void> {
    this.calls.push(call);
    await Promise.resolve(); // answers come asynchronously, as over the network
    const fault = this.#faults.find((f) => f.op === call.op && f.times > 0 && f.when(call));
    if (fault === undefined) return;
    fault.times--;
    throw fault.error();
  }

  async #get(kind: FakeKind, namespace: string, name: string): Promise<Obj | undefined> {
    await this.#record({ op: `get${kind}`, namespace, name });
    const o = this.#objects.get(`${kind}/${namespace}/${name}`);
    return o === undefined ? undefined : clone(o);
  }

  async #create<T extends Obj>(kind: FakeKind, namespace: string, obj: T, opts: CreateOptions): Promise<T> {
    const name = obj.metadata?.name ?? '';
    const call: ObjectCall = { op: `create${kind}`, namespace, name, ...(opts.dryRun ? { dryRun: true } : {}) };
    await this.#record(call);
    if (this.#objects.has(`${kind}/${namespace}/${name}`)) throw apiError(409, 'AlreadyExists', `create ${kind.toLowerCase()} ${namespace}/${name}: ${name} already exists`);
    const stored = clone(obj);
    stored.metadata = { ...stored.metadata, namespace, uid: this.#nextUid(kind), resourceVersion: this.#nextVersion(), creationTimestamp: now() };
    if (opts.dryRun) return stored;
    call.created = stored.metadata.uid;
    if (kind === 'PVC') this.onPvcCreated(stored as V1PersistentVolumeClaim);
    const gated = kind === 'Pod' && ((stored as V1Pod).spec?.schedulingGates ?? []).length > 0;
    // as the API server reports a gated Pod: not scheduled, and why
    if (gated) (stored as V1Pod).status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated', message: 'Scheduling is blocked due to non-empty scheduling gates' }] };
    this.#objects.set(`${kind}/${namespace}/${name}`, stored);
    this.#emit(kind, 'ADDED', stored);
    if (kind === 'Pod' && !gated) setTimeout(() => this.onPodCreated(clone(stored as V1Pod)), 0);
    return clone(stored);
  }

  async #delete(kind: FakeKind, namespace: string, name: string, preconditions: DeletePreconditions): Promise<DeleteOutcome> {
    await this.#record({ op: `delete${kind}`, namespace, name, preconditions: { ...preconditions } });
    const key = `${kind}/${namespace}/${name}`;
    const obj = this.#objects.get(key);
    if (obj === undefined) return 'absent';
    const m = obj.metadata ?? {};
    if (m.uid !== preconditions.uid || (preconditions.resourceVersion !== undefined && m.resourceVersion !== preconditions.resourceVersion)) {
      throw apiError(409, 'Conflict', `delete ${kind.toLowerCase()} ${namespace}/${name}: not deleted: the object changed since it was read`);
    }
    this.#objects.delete(key);
    this.#emit(kind, 'DELETED', obj);
    return 'deleted';
  }

  /** A merge patch of labels pinned to UID + resourceVersion (409 Conflict otherwise). */
  async #relabel(kind: FakeKind, target: RelabelTarget, labels: LabelChanges): Promise<Obj> {
    const { namespace, name } = target;
    await this.#record({ op: `relabel${kind}`, namespace, name, preconditions: { uid: target.uid, resourceVersion: target.resourceVersion } });
    const obj = this.#objects.get(`${kind}/${namespace}/${name}`);
    if (obj === undefined) throw apiError(404, 'NotFound', `relabel ${kind.toLowerCase()} ${namespace}/${name}: not found`);
    if (obj.metadata?.uid !== target.uid || obj.metadata?.resourceVersion !== target.resourceVersion) {
      throw apiError(409, 'Conflict', `relabel ${kind.toLowerCase()} ${namespace}/${name}: the object has been modified`);
    }
    const next: Record<string, string> = { ...(obj.metadata?.labels ?? {}) };
    for (const [k, v] of Object.entries(labels)) {
      if (v === null) delete next[k];
      else next[k] = v;
    }
    obj.metadata = { ...obj.metadata, labels: next, resourceVersion: this.#nextVersion() };
    this.#emit(kind, 'MODIFIED', obj);
    return clone(obj);
  }

  /** The JSON Patch of kube/gate.ts: UID and gate list tested (422 otherwise), the gate removed; the last one lifted hands the Pod to the kubelet. */
  async #liftGate(target: GateTarget, gate: string): Promise<V1Pod> {
    const { namespace, name } = target;
    await this.#record({ op: 'liftGatePod', namespace, name, preconditions: { uid: target.uid }, gate, gates: [...target.gates] });
    const pod = this.#objects.get(`Pod/${namespace}/${name}`) as V1Pod | undefined;
    if (pod === undefined) throw apiError(404, 'NotFound', `lift the scheduling gate of pod ${namespace}/${name}: not found`);
    const gates = (pod.spec?.schedulingGates ?? []).map((g) => g.name);
    if (pod.metadata?.uid !== target.uid || JSON.stringify(gates) !== JSON.stringify(target.gates)) {
      throw apiError(422, 'Invalid', `lift the scheduling gate of pod ${namespace}/${name}: the test operation failed`);
    }
    const rest = gates.filter((g) => g !== gate);
    pod.spec = { ...pod.spec, containers: pod.spec?.containers ?? [] };
    if (rest.length === 0) delete pod.spec.schedulingGates;
    else pod.spec.schedulingGates = rest.map((g) => ({ name: g }));
    if (rest.length === 0 && pod.status?.conditions?.[0]?.reason === 'SchedulingGated') pod.status = { phase: 'Pending', conditions: [] };
    pod.metadata = { ...pod.metadata, resourceVersion: this.#nextVersion() };
    this.#emit('Pod', 'MODIFIED', pod);
    if (rest.length === 0 && gates.length > 0) setTimeout(() => this.onPodCreated(clone(pod)), 0);
    return clone(pod);
  }

  async #list(kind: FakeKind, namespace: string, labelSelector: string): Promise<Listing<Obj>> {
    await this.#record({ op: kind === 'Pod' ? 'listPods' : 'listPvcs', namespace, labelSelector });
    const items = [...this.#objects.entries()].filter(([k, o]) => k.startsWith(`${kind}/${namespace}/`) && matchesSelector(o.metadata?.labels, labelSelector)).map(([, o]) => clone(o));
    return { items, serverDate: new Date().toUTCString() };
  }

  async #watchOne(kind: FakeKind, namespace: string, name: string, onEvent: (event: ObjectEvent<Obj>) => void, signal: AbortSignal): Promise<void> {
    await this.#record({ op: `watch${kind}`, namespace, name });
    const notify = (type: 'ADDED' | 'MODIFIED' | 'DELETED', o: unknown): void => onEvent({ type, object: clone(o as Obj) });
    return this.#watch({ kind, namespace, key: name, notify }, () => onEvent({ type: 'SYNC', object: this.find(kind as 'Pod', namespace, name) }), signal);
  }

  /** Reports the current state, then every change, until `signal` aborts. */
  #watch(w: Watcher, sync: () => void, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      this.#watchers.add(w);
      signal.addEventListener('abort', () => {
        this.#watchers.delete(w);
        resolve();
      }, { once: true });
      sync();
    });
  }

  #emit(kind: FakeKind, type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: Obj): void {
    const m = obj.metadata ?? {};
    for (const w of [...this.#watchers]) {
      if (w.namespace !== m.namespace) continue;
      if ((w.kind === kind && w.key === m.name) || (kind === 'Pod' && w.kind === 'Pods' && matchesSelector(m.labels, w.key))) w.notify(type, obj);
    }
  }

  #key(kind: FakeKind, m: V1ObjectMeta | undefined): string {
    return `${kind}/${m?.namespace ?? ''}/${m?.name ?? ''}`;
  }

  #nextUid(kind: FakeKind): string {
    return `${kind.toLowerCase()}-uid-${++this.#uid}`;
  }

  #nextVersion(): string {
    return String(++this.#version);
  }
}
