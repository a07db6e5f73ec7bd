/**
 * Part of stage `storage`: a new managed claim is given a short moment to bind before its Pod may
 * be scheduled (the Pod is created meanwhile behind a scheduling gate, gate.ts; else after). Created
 * together, the two race in the cluster: the scheduler may place the Pod as soon as the claim names
 * its volume, before the claim's status says Bound, and the kubelet then fails the mount
 * (`FailedMount`) and retries only after its pod-worker back-off (~10 s; seen on the test cluster
 * with 10 launches at once); the scheduler, too, once left a Pod of an unbound claim unscheduled for
 * minutes. The Pod would wait for the binding anyway; behind the gate, its create and checkpoints
 * overlap the binding. Not for a class that binds on first use (`WaitForFirstConsumer`, told by the
 * PV controller's Event of that reason): there the Pod is what makes it bind. The wait is
 * bounded: a claim still unbound after {@link BINDING_GRACE_MS} goes on to `pod_ready`, which
 * reports the binding with its own budget, as before.
 * @module
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { STAGE } from '../constants.js';
import type { KubeLaunchState } from './context.js';

const BINDING_GRACE_MS = 5000;

type BindingOutcome = 'bound' | 'first_consumer' | 'grace_over';

interface BindingOptions {
  graceMs?: number;
  /** The Pod is being created behind the gate meanwhile (what the reasons say comes next). */
  gated?: boolean;
  /** Ends the wait early, with no outcome reported (the gated Pod's create failed: `pod_ready` reports that). */
  cancel?: AbortSignal;
}

/**
 * Waits (at most `graceMs`) for the claim to bind, and says how the wait ended under stage
 * `storage` (and records it in `l.claimBinding`); null when cancelled.
 */
export async function awaitClaimBinding(l: KubeLaunchState, pvc: V1PersistentVolumeClaim, opts: BindingOptions = {}): Promise<BindingOutcome | null> {
  const graceMs = opts.graceMs ?? BINDING_GRACE_MS;
  const outcome = await untilBound(l, pvc, graceMs, opts.cancel);
  if (outcome === null) return null;
  l.claimBinding = outcome.kind;
  const next = opts.gated === true ? 'lifting the scheduling gate of the Pod' : 'creating the Pod';
  const report = (reason: string, message: string): void => l.report({ stage: STAGE.storage, status: 'waiting', reason, message });
  if (outcome.kind === 'bound') report('ClaimBound', `workspace PVC bound${outcome.volume ? ` to volume ${outcome.volume}` : ''}`);
  else if (outcome.kind === 'first_consumer') report('WaitForFirstConsumer', `the storage class binds the workspace PVC once the Pod is scheduled: ${next}`);
  else report('ClaimPending', `workspace PVC not bound after ${graceMs / 1000} s: ${next}, which waits for it`);
  return outcome.kind;
}

interface Outcome {
  kind: BindingOutcome;
  volume?: string;
}

async function untilBound(l: KubeLaunchState, pvc: V1PersistentVolumeClaim, graceMs: number, cancel: AbortSignal | undefined): Promise<Outcome | null> {
  if (pvc.status?.phase === 'Bound') return { kind: 'bound', ...(pvc.spec?.volumeName ? { volume: pvc.spec.volumeName } : {}) };
  if (cancel?.aborted === true) return null;
  const name = pvc.metadata?.name ?? '';
  const uid = pvc.metadata?.uid ?? '';
  const stop = new AbortController();
  const signal = l.signal ? AbortSignal.any([l.signal, stop.signal]) : stop.signal;
  let settle!: (outcome: Outcome | null) => void;
  const outcome = new Promise<Outcome | null>((resolve) => (settle = resolve));
  const timer = setTimeout(() => settle({ kind: 'grace_over' }), graceMs);
  const cancelled = (): void => settle(null);
  cancel?.addEventListener('abort', cancelled, { once: true });
  // a watch that fails only ends the wait early: pod_ready watches (and reports) the claim again
  const ended = (): void => settle({ kind: 'grace_over' });
  void l.kube.objects.watchPvc(
    l.namespace,
    name,
    (e) => {
      if (e.object?.metadata?.uid === uid && e.object.status?.phase === 'Bound') settle({ kind: 'bound', ...(e.object.spec?.volumeName ? { volume: e.object.spec.volumeName } : {}) });
    },
    signal,
  ).then(ended, ended);
  void l.kube.objects.watchEvents(
    l.namespace,
    uid,
    (ev) => {
      if (ev.reason === 'WaitForFirstConsumer') settle({ kind: 'first_consumer' });
    },
    signal,
  ).then(ended, ended);
  let onAbort: (() => void) | null = null;
  try {
    return await Promise.race<Outcome | null>([
      outcome,
      new Promise<never>((_, reject) => {
        if (l.signal?.aborted) reject(l.signal.reason);
        onAbort = () => reject(l.signal?.reason);
        l.signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    cancel?.removeEventListener('abort', cancelled);
    stop.abort();
    // the launch's signal may outlive this wait (a pool's): nothing of it stays hung on it
    if (onAbort !== null) l.signal?.removeEventListener('abort', onAbort);
  }
}
