/**
 * The sweep of unrecorded objects: Pods, PVCs and NetworkPolicies with Berth's labels in the executor's namespace
 * that no session of this Berth records. They come from a create that committed after its launch
 * had given up on it (an ambiguous create the read-back did not find, or one that committed after
 * recovery looked), so no inventory row ever learned their UID. Which ones are deleted is decided
 * by sweep-select.ts; each is deleted by UID and resourceVersion (a changed object is read and
 * decided again), and waited for, with a `Reaped` Kubernetes Event on it first (kubectl describe and
 * get events show who deleted it and why). Objects of another Berth are only reported.
 * @module
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { sanitize } from '../../shared/sanitize.js';
import { LABEL, LABEL_VALUE } from './constants.js';
import { EVENT_REASON, type EventRecorder, type ObjectEvent } from './event-recorder.js';
import { isConflict, isForbidden, type DeleteOutcome, type DeletePreconditions, type KubeObjects, type KubePolicies } from './kube/index.js';
import { describeSwept, selectForSweep, sweptObject, type ObjectOwner, type SweptKind, type SweptObject } from './sweep-select.js';

/** The label selector of every object Berth creates. */
const BERTH_SELECTOR = `${LABEL.managedBy}=${LABEL_VALUE.managedBy}`;

interface SweepOptions {
  namespace: string;
  installationId: string;
  /** Asked right before each decision (the inventory as it is then); may read a store. */
  isRecorded: (owner: ObjectOwner) => boolean | Promise<boolean>;
  /** Younger objects (by the API server's clock) are left for a later sweep. */
  minAgeMs: number;
  signal: AbortSignal;
  log: Logger;
  /** UIDs of foreign objects already logged (each is logged once per process). */
  reported?: Set<string>;
  /** Writes the `Reaped` Event on each object before its delete. */
  events?: EventRecorder;
  /** Also sweeps NetworkPolicies (sessions' egress policies) through this port. */
  policies?: KubePolicies;
}

interface ForeignObject {
  object: string;
  why: string;
}

export interface SweepReport {
  /** The objects this sweep deleted (`Pod ns/name (session s)`). */
  deleted: string[];
  /** Objects with Berth's labels that are not this Berth's: left alone. */
  foreign: ForeignObject[];
  /** How many of ours are unrecorded but still too young to delete. */
  waiting: number;
  /** When the first waiting object is old enough (ms from now); null when none waits. */
  nextInMs: number | null;
  /** Failures (a list or a delete); the sweep goes on with the other objects. */
  errors: string[];
}

/** Deletes the unrecorded objects of this Berth in `namespace` (Pods first, then their claims). */
export async function sweepUnrecorded(objects: KubeObjects, opts: SweepOptions): Promise<SweepReport> {
  const report: SweepReport = { deleted: [], foreign: [], waiting: 0, nextInMs: null, errors: [] };
  const kinds: SweptKind[] = opts.policies ? ['Pod', 'PVC', 'NetworkPolicy'] : ['Pod', 'PVC'];
  const ports: SweepPorts = { objects, ...(opts.policies ? { policies: opts.policies } : {}) };
  for (const kind of kinds) {
    let listed: Listed;
    try {
      listed = await listBerthObjects(ports, kind, opts.namespace, opts.signal);
    } catch (err) {
      // a Role without managed_pvc needs no claims at all, and Berth then created none (nor policies without network:)
      if (kind !== 'Pod' && isForbidden(err)) continue;
      report.errors.push(sanitize(errorMessage(err)));
      continue;
    }
    for (const o of listed.objects) await sweepOne(ports, o, listed.clock, opts, report);
  }
  return report;
}

/** The store's answer for the object's owner, asked once before the pure decision (false when it names none). */
async function recordedOwner(o: SweptObject, isRecorded: SweepOptions['isRecorded']): Promise<(owner: ObjectOwner) => boolean> {
  const instanceId = o.labels[LABEL.instanceId];
  const sessionId = o.labels[LABEL.sessionId];
  if (!instanceId || !sessionId) return () => false;
  const answer = await isRecorded({ instanceId, sessionId });
  return (owner) => owner.instanceId === instanceId && owner.sessionId === sessionId && answer;
}

async function sweepOne(ports: SweepPorts, first: SweptObject, clock: ServerClock, opts: SweepOptions, report: SweepReport): Promise<void> {
  let o: SweptObject | null = first;
  for (let attempt = 0; o !== null; attempt++) {
    const recorded = await recordedOwner(o, opts.isRecorded);
    const verdict = selectForSweep(o, { installationId: opts.installationId, isRecorded: (owner) => recorded(owner), serverNow: clock.now(), minAgeMs: opts.minAgeMs });
    if (verdict.action === 'keep') return;
    if (verdict.action === 'report') {
      report.foreign.push({ object: describeSwept(o), why: verdict.why });
      if (!opts.reported?.has(o.uid)) {
        opts.reported?.add(o.uid);
        opts.log.warn({ object: describeSwept(o), uid: o.uid, why: verdict.why }, "an object with Berth's labels is not this Berth's: left alone (delete it yourself if nobody uses it)");
      }
      return;
    }
    if (verdict.action === 'wait') {
      report.waiting++;
      report.nextInMs = Math.min(report.nextInMs ?? Number.POSITIVE_INFINITY, verdict.oldEnoughInMs);
      return;
    }
    if (attempt === 0) await opts.events?.emit(reapedEvent(o, verdict.owner.sessionId));
    try {
      const pre = { uid: o.uid, ...(o.resourceVersion !== null ? { resourceVersion: o.resourceVersion } : {}) };
      const outcome = await deleteSwept(ports, o, pre, opts.signal);
      if (outcome === 'deleted') {
        report.deleted.push(describeSwept(o));
        opts.log.warn({ object: describeSwept(o), uid: o.uid }, 'deleted an object of this Berth that no session records (a create that committed after its launch had given up on it)');
      }
      return;
    } catch (err) {
      if (!isConflict(err) || attempt >= 2) {
        report.errors.push(sanitize(errorMessage(err)));
        return;
      }
      // it changed since it was listed: read it again and decide again (same UID only)
      try {
        const again = await read(ports, o, opts.signal);
        o = again?.metadata?.uid === o.uid ? sweptObject(o.kind, again.metadata) : null;
      } catch (readErr) {
        report.errors.push(sanitize(errorMessage(readErr)));
        return;
      }
    }
  }
}

/** The Event on an object the sweep is about to delete. */
function reapedEvent(o: SweptObject, sessionId: string): ObjectEvent {
  return {
    regarding: { kind: o.kind === 'PVC' ? 'PersistentVolumeClaim' : o.kind, namespace: o.namespace, name: o.name, uid: o.uid },
    type: 'Normal',
    reason: EVENT_REASON.reaped,
    action: 'Delete',
    note:
      `Berth deletes this ${o.kind} of session ${sessionId}: no session of this Berth records it ` +
      '(a create that committed after its launch had given up on it, so its launch never learned of it).',
  };
}

/** The ports the sweep reaches objects through (policies only when it sweeps them). */
interface SweepPorts {
  objects: KubeObjects;
  policies?: KubePolicies;
}

function policiesOf(ports: SweepPorts): KubePolicies {
  if (!ports.policies) throw new Error('the sweep was given no NetworkPolicy port');
  return ports.policies;
}

function read(ports: SweepPorts, o: SweptObject, signal: AbortSignal): Promise<{ metadata?: V1ObjectMeta } | undefined> {
  if (o.kind === 'NetworkPolicy') return policiesOf(ports).get(o.namespace, o.name, signal);
  return o.kind === 'Pod' ? ports.objects.getPod(o.namespace, o.name, signal) : ports.objects.getPvc(o.namespace, o.name, signal);
}

function deleteSwept(ports: SweepPorts, o: SweptObject, pre: DeletePreconditions, signal: AbortSignal): Promise<DeleteOutcome> {
  if (o.kind === 'NetworkPolicy') return policiesOf(ports).delete(o.namespace, o.name, pre, signal);
  return o.kind === 'Pod' ? ports.objects.deletePod(o.namespace, o.name, pre, signal) : ports.objects.deletePvc(o.namespace, o.name, pre, signal);
}

/** The API server's time: its Date header at the list, advanced by the local time elapsed since. */
interface ServerClock {
  now(): Date;
}

interface Listed {
  objects: SweptObject[];
  clock: ServerClock;
}

/** The Berth-labelled Pods or PVCs of `namespace`, and the API server's clock as of the list. */
export async function listBerthObjects(ports: SweepPorts, kind: SweptKind, namespace: string, signal: AbortSignal): Promise<Listed> {
  const listed: { items: { metadata?: V1ObjectMeta }[]; serverDate: string | undefined } =
    kind === 'NetworkPolicy'
      ? await policiesOf(ports).list(namespace, BERTH_SELECTOR, signal)
      : kind === 'Pod'
        ? await ports.objects.listPods(namespace, BERTH_SELECTOR, signal)
        : await ports.objects.listPvcs(namespace, BERTH_SELECTOR, signal);
  const at = performance.now();
  const server = listed.serverDate === undefined ? Number.NaN : Date.parse(listed.serverDate);
  // no usable Date header: the local clock (the age threshold leaves room for a little skew)
  const base = Number.isFinite(server) ? server : Date.now();
  return {
    objects: listed.items.map((i) => sweptObject(kind, i.metadata)).filter((o): o is SweptObject => o !== null),
    clock: { now: () => new Date(base + (performance.now() - at)) },
  };
}
