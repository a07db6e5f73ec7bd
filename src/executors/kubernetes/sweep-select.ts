/**
 * Which Berth-labelled objects the sweep of unrecorded objects deletes (the pure half of sweep.ts).
 * An object is deleted only when all of these hold:
 * - it is not being deleted already;
 * - no session the controller knows claims it (`isRecorded`: a runtime row records its instance,
 *   or its session is in a state where a launch, stop or remove may be working on it);
 * - it carries this Berth's installation id (annotation `berth.dev/installation`);
 * - it is older than `minAgeMs` by the API server's clock (a create that committed that recently
 *   may still be on its way to its checkpoint).
 * An object with Berth's labels but another installation id, none, or without the instance and
 * session labels is another Berth's (or someone's copy): it is reported, never deleted.
 * @module
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { ANNOTATION, LABEL } from './constants.js';

export type SweptKind = 'Pod' | 'PVC' | 'NetworkPolicy';

/** What the sweep knows of one listed object. */
export interface SweptObject {
  kind: SweptKind;
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string | null;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
  /** creationTimestamp (the API server's clock); null when missing. */
  created: Date | null;
  deleting: boolean;
}

/** Who an object says it belongs to (its ownership labels). */
export interface ObjectOwner {
  instanceId: string;
  sessionId: string;
}

export interface SelectContext {
  installationId: string;
  /** True when the controller knows the session or instance (never delete then). */
  isRecorded: (owner: ObjectOwner) => boolean;
  /** The API server's current time (its Date header), so the age does not depend on the local clock. */
  serverNow: Date;
  minAgeMs: number;
}

type Verdict =
  | { action: 'delete'; owner: ObjectOwner }
  | { action: 'keep'; why: 'deleting' | 'recorded' }
  /** Ours and unrecorded, but too young to tell from a create still on its way: a later sweep decides. */
  | { action: 'wait'; owner: ObjectOwner; oldEnoughInMs: number }
  | { action: 'report'; why: string };

/** The object as the sweep sees it, from its metadata. Null when it has no name or UID. */
export function sweptObject(kind: SweptKind, meta: V1ObjectMeta | undefined): SweptObject | null {
  if (meta?.name === undefined || meta.uid === undefined || meta.namespace === undefined) return null;
  const created = meta.creationTimestamp === undefined ? null : new Date(meta.creationTimestamp);
  return {
    kind,
    namespace: meta.namespace,
    name: meta.name,
    uid: meta.uid,
    resourceVersion: meta.resourceVersion ?? null,
    labels: meta.labels ?? {},
    annotations: meta.annotations ?? {},
    created: created !== null && Number.isFinite(created.getTime()) ? created : null,
    deleting: meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null,
  };
}

/** The sweep's decision about one object. */
export function selectForSweep(o: SweptObject, ctx: SelectContext): Verdict {
  if (o.deleting) return { action: 'keep', why: 'deleting' };
  const instanceId = o.labels[LABEL.instanceId];
  const sessionId = o.labels[LABEL.sessionId];
  if (!instanceId || !sessionId) return { action: 'report', why: `it has Berth's labels but no ${LABEL.instanceId} and ${LABEL.sessionId}` };
  const owner = { instanceId, sessionId };
  // before the installation check: this Berth's own objects from before installation ids were stamped are recorded, not foreign
  if (ctx.isRecorded(owner)) return { action: 'keep', why: 'recorded' };
  const installation = o.annotations[ANNOTATION.installation];
  if (!installation) return { action: 'report', why: 'it carries no installation id (another Berth, or one from before installation ids)' };
  if (installation !== ctx.installationId) return { action: 'report', why: `it was created by another Berth (installation ${installation.slice(0, 8)}…)` };
  if (o.created === null) return { action: 'wait', owner, oldEnoughInMs: ctx.minAgeMs };
  const age = ctx.serverNow.getTime() - o.created.getTime();
  if (age < ctx.minAgeMs) return { action: 'wait', owner, oldEnoughInMs: ctx.minAgeMs - age };
  return { action: 'delete', owner };
}

/** `Pod ns/name (session s)`: how reports and logs name an object. */
export function describeSwept(o: SweptObject): string {
  const session = o.labels[LABEL.sessionId];
  return `${o.kind} ${o.namespace}/${o.name}${session ? ` (session ${session})` : ''}`;
}
