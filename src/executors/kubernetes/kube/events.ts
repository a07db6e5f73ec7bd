/**
 * Writing a Kubernetes Event (events.k8s.io/v1) about one of the executor's objects, so that
 * `kubectl describe pod` and `kubectl get events` tell what Berth did to it. The body is built from
 * a plain {@link EventRecord}: `eventTime` is a MicroTime (client-node's V1MicroTime serializes it
 * with six fractional digits, the only form the API server accepts for it), the name is the
 * object's name and the time in hex nanoseconds plus a random suffix, as client-go names them.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { EventsV1Api, V1MicroTime, type EventsV1Event } from '@kubernetes/client-node';
import type { KubeClient } from './client.js';

/** The object an Event is about (or related to): always one of the executor's, with its UID. */
export interface EventObjectRef {
  kind: 'Pod' | 'PersistentVolumeClaim' | 'NetworkPolicy';
  namespace: string;
  name: string;
  uid: string;
}

/** One Event as the executor writes it; the Event's namespace is `regarding`'s. */
export interface EventRecord {
  regarding: EventObjectRef;
  /** A second object it concerns (the Pod a replacement replaced). */
  related?: EventObjectRef;
  type: 'Normal' | 'Warning';
  /** CamelCase, e.g. `LaunchFailed`. */
  reason: string;
  /** What Berth did or failed to do, e.g. `Launch`. */
  action: string;
  /** A sanitized human sentence of at most 1 KiB. */
  note: string;
  reportingController: string;
  reportingInstance: string;
  time: Date;
}

const API_VERSION: Record<EventObjectRef['kind'], string> = { Pod: 'v1', PersistentVolumeClaim: 'v1', NetworkPolicy: 'networking.k8s.io/v1' };

function objectReference(ref: EventObjectRef): EventsV1Event['regarding'] {
  return { apiVersion: API_VERSION[ref.kind], kind: ref.kind, namespace: ref.namespace, name: ref.name, uid: ref.uid };
}

/** `<object>.<hex nanoseconds><4 random hex>`: unique, and sorted by time like client-go's names. */
function eventName(record: EventRecord): string {
  const nanos = BigInt(record.time.getTime()) * 1_000_000n;
  return `${record.regarding.name}.${nanos.toString(16)}${randomBytes(2).toString('hex')}`;
}

/** The events.k8s.io/v1 Event of `record`. */
export function eventBody(record: EventRecord): EventsV1Event {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: eventName(record), namespace: record.regarding.namespace },
    eventTime: new V1MicroTime(record.time.getTime()),
    regarding: objectReference(record.regarding),
    ...(record.related ? { related: objectReference(record.related) } : {}),
    type: record.type,
    reason: record.reason,
    action: record.action,
    note: record.note,
    reportingController: record.reportingController,
    reportingInstance: record.reportingInstance,
  };
}

/** Creates Events through one events.k8s.io client (built on first use). */
export function eventWriter(client: KubeClient): (record: EventRecord, signal: AbortSignal) => Promise<void> {
  let api: EventsV1Api | null = null;
  return async (record, signal) => {
    api ??= client.kubeConfig.makeApiClient(EventsV1Api);
    const events = api;
    const body = eventBody(record);
    const namespace = record.regarding.namespace;
    await client.request(`create event ${namespace}/${body.metadata?.name ?? '?'}`, signal, (o) => events.createNamespacedEvent({ namespace, body }, o));
  };
}
