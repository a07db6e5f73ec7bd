/**
 * Lifts one scheduling gate of one Pod, pinned to exactly the Pod that was read: a JSON Patch that
 * first tests the Pod's UID and its gate list as read, then writes the list without the gate. The
 * API server applies a JSON Patch all or nothing: another Pod under the name, or a gate list that
 * changed since it was read, fails a test (422) and nothing changes.
 * @module
 */
import { PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from './client.js';

/** The Pod whose gate is lifted, as read: its UID and the names of its gates, in order. */
export interface GateTarget {
  namespace: string;
  name: string;
  uid: string;
  gates: readonly string[];
}

type JsonPatchOp = { op: 'test' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/** The patch that removes `gate` from `target` as read (exported for its unit test). */
export function liftGatePatch(target: GateTarget, gate: string): JsonPatchOp[] {
  const rest = target.gates.filter((g) => g !== gate).map((name) => ({ name }));
  return [
    { op: 'test', path: '/metadata/uid', value: target.uid },
    { op: 'test', path: '/spec/schedulingGates', value: target.gates.map((name) => ({ name })) },
    rest.length === 0 ? { op: 'remove', path: '/spec/schedulingGates' } : { op: 'replace', path: '/spec/schedulingGates', value: rest },
  ];
}

/** The Pod as it is after the patch. @throws KubeApiError (422 when a test failed: another Pod, or its gates changed; `NotFound` when gone) */
export function liftSchedulingGate(client: KubeClient, target: GateTarget, gate: string, signal?: AbortSignal): Promise<V1Pod> {
  return client.request(`lift the scheduling gate of pod ${target.namespace}/${target.name}`, signal, (o) =>
    client.core.patchNamespacedPod({ namespace: target.namespace, name: target.name, body: liftGatePatch(target, gate) }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, o)),
  );
}
