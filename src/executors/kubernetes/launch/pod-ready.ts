/**
 * Stage `pod_ready` (spec §4.3, improved): compose and create the Pod (checkpointed the moment it
 * exists, then verified as admitted; on a new managed claim it was created during `storage`, behind
 * a scheduling gate lifted now: gate.ts), then wait — not for the kubelet's Running status, which lags
 * the container by up to a second, but for the main container to accept an exec: the first exec is
 * the image probe (Node or not) the bootstrap needs anyway. The monitor keeps reporting reasons and
 * failing fast meanwhile.
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { LaunchError } from '../../launch-kit/index.js';
import { CHECKPOINT, STAGE } from '../constants.js';
import { AdmissionError, assertPodAdmitted, parseProbeOutput, PROBE_SCRIPT, type ProbeResult } from '../compose/index.js';
import { isExecUnavailable, KubeExecError, SUBPROTOCOL_UNSUPPORTED, type ExecResult } from '../kube/index.js';
import type { KubeLaunchState } from './context.js';
import { createOwned } from './create.js';
import { ensureNetworkPolicy } from './network-policy.js';
import { desiredPod } from './desired.js';
import { PodMonitor } from './monitor.js';

/** How long an attempt of the first exec may stay silent before it is given up (its command prints first thing). */
const SILENT_ATTEMPT_MS = 5_000;

/** Pause between exec attempts while the container starts: dense first (an exec costs ~50 ms), then backing off. */
const PROBE_DELAYS_MS = [25, 25, 50, 50, 100, 100, 200, 400];

interface ReadyPod {
  pod: V1Pod;
  monitor: PodMonitor;
  /** What the probe found; null when the first exec was the bootstrap (`first` of the options). */
  probe: ProbeResult | null;
  /** The end of that first exec, which the container has accepted; null otherwise. */
  first: Promise<ExecResult> | null;
}

/** An exec to start as soon as the container takes one, instead of the probe; it must print to stdout first thing. */
interface FirstExec {
  command: string[];
  stdin: Buffer[];
  onStdout?: (chunk: Buffer) => void;
  /** Ends the exec, whichever attempt runs (a bootstrap step outlived its budget). */
  signal?: AbortSignal;
}

/**
 * Creates the session Pod under `name` (the recorded name for a replacement), checkpointed before
 * the create (its nonce's digest), the moment it exists (its UID) and once verified as admitted.
 * `gated`: behind Berth's scheduling gate, for a new managed claim that binds meanwhile (gate.ts).
 */
export async function createPod(l: KubeLaunchState, name: string, opts: { gated?: boolean } = {}): Promise<V1Pod> {
  const input = { profile: l.profile, identity: l.identity, namespace: l.namespace, random: l.env.random, installationId: l.env.installationId };
  const desired = desiredPod(input, name, l.meta.pvcCreated ? l.meta.pvcName : null, { schedulingGate: opts.gated === true });
  await ensureNetworkPolicy(l);
  // Recorded before the create (spec §4.1, improved): a crash before the UID is recorded still finds this Pod.
  l.meta = { ...l.meta, podName: name, podUid: null, restartCount: null, remotePort: null, podReclaimed: false };
  await l.checkpointPending(CHECKPOINT.podCreating, desired);
  // Whether the create itself answered: an object adopted by a GET (ambiguous create) may already be bound to a node.
  let answered = false;
  const created = await createOwned({
    kind: 'Pod',
    stage: STAGE.podReady,
    desired,
    create: async () => {
      const pod = await l.kube.objects.createPod(l.namespace, desired, { ...(l.signal ? { signal: l.signal } : {}) });
      answered = true;
      return pod;
    },
    get: (signal) => l.kube.objects.getPod(l.namespace, name, signal),
  });
  const uid = created.metadata?.uid ?? '';
  l.createdPod = { name, uid };
  l.pod = created;
  l.meta = { ...l.meta, podUid: uid, pendingCreateDigest: null };
  await l.checkpoint(CHECKPOINT.podCreated);
  try {
    assertPodAdmitted(desired, created, { mainContainer: l.profile.mainContainer, afterScheduling: !answered });
  } catch (err) {
    if (err instanceof AdmissionError) throw new LaunchError(STAGE.podReady, 'AdmissionMutated', `the API server admitted a changed Pod: ${err.message}`, { cause: err });
    throw err;
  }
  await l.checkpoint(CHECKPOINT.podAdmitted);
  return created;
}

/**
 * Creates the session Pod under `name` — or takes `created`, the Pod made while its claim bound,
 * its gate lifted — and waits until it takes an exec: the image probe, or `first` when the image
 * was probed before (the bootstrap then starts the moment the container can run it; the stage ends
 * when it is accepted).
 *
 * `reusedName`: the name was a Pod's whose containers may still run (a replacement: that Pod went
 * without Berth seeing it go, e.g. deleted by someone with grace 0). The kubelet routes an exec by
 * name, and may still run the old Pod's containers for a moment after the API forgot it: an exec
 * could land there. So such a Pod is tried only once its own status shows the main container
 * running (the status may lag the container by up to a second). Fresh names, and a resume after a
 * stop that saw the old Pod's graceful delete through (`podReclaimed`), keep the fast path.
 * Checking that one probe reached the new Pod (its UID from the downward API) is not enough: tried,
 * and the bootstrap exec after it was still routed to the old Pod's container (InternalError).
 */
export async function createReadyPod(l: KubeLaunchState, name: string, opts: { reusedName?: boolean; first?: FirstExec; created?: V1Pod } = {}): Promise<ReadyPod> {
  const created = opts.created ?? (await createPod(l, name));
  const monitor = new PodMonitor(l, created);
  try {
    const reusedName = opts.reusedName ?? false;
    if (opts.first !== undefined) {
      const first = await Promise.race([execWhenAccepted(l, monitor, name, reusedName, opts.first), monitor.failure]);
      return { pod: monitor.pod ?? created, monitor, probe: null, first: first.done };
    }
    const probe = await Promise.race([probeUntilReady(l, monitor, name, reusedName), monitor.failure]);
    return { pod: monitor.pod ?? created, monitor, probe, first: null };
  } catch (err) {
    monitor.close();
    throw err;
  }
}

/** An exec error that means the container did not take it yet (still creating, a stream that broke while it started). */
function notAcceptedYet(err: unknown): boolean {
  if (!(err instanceof KubeExecError) || err.reason === SUBPROTOCOL_UNSUPPORTED) return false;
  return isExecUnavailable(err) || err.kind === 'stream' || (err.kind === 'refused' && err.status !== 401 && err.status !== 403);
}

/** Waits until the next attempt is due: attempts start once the Pod is scheduled (and, for a reused name, runs). */
async function nextAttempt(l: KubeLaunchState, monitor: PodMonitor, reusedName: boolean, attempt: number): Promise<boolean> {
  l.signal?.throwIfAborted();
  if (monitor.scheduled && (!reusedName || monitor.containerRunning(l.profile.mainContainer))) return true;
  await pause(monitor, attempt);
  return false;
}

/** The back-off before attempt `attempt + 1`, cut short by any change of the Pod or an Event. */
function pause(monitor: PodMonitor, attempt: number): Promise<void> {
  return monitor.nextChange(PROBE_DELAYS_MS[Math.min(attempt, PROBE_DELAYS_MS.length - 1)] ?? 400);
}

/**
 * Tries `exec` until it runs in the container, and returns its end without waiting for it. The
 * command prints a byte to stdout first thing; only an attempt that failed before that byte is
 * tried again: the bootstrap writes files and clones, so one that may have run never runs twice.
 */
async function execWhenAccepted(l: KubeLaunchState, monitor: PodMonitor, pod: string, reusedName: boolean, exec: FirstExec): Promise<{ done: Promise<ExecResult> }> {
  for (let attempt = 0; ; attempt++) {
    while (!(await nextAttempt(l, monitor, reusedName, attempt))) {
      // not due yet
    }
    let started = false;
    let accepted!: () => void;
    const acceptance = new Promise<void>((resolve) => (accepted = resolve));
    // An attempt whose stream opened but whose command stays silent is given up and tried again
    // (it cannot have got far: the command prints before anything else).
    const silent = new AbortController();
    const timer = setTimeout(() => silent.abort(), SILENT_ATTEMPT_MS);
    const done = l.kube.exec.exec({
      namespace: l.namespace,
      pod,
      container: l.profile.mainContainer,
      command: exec.command,
      stdin: exec.stdin,
      ...(exec.onStdout ? { onStdout: exec.onStdout } : {}),
      onFirstStdout: () => {
        started = true;
        clearTimeout(timer);
        accepted();
      },
      signal: AbortSignal.any([silent.signal, ...(l.signal ? [l.signal] : []), ...(exec.signal ? [exec.signal] : [])]),
    });
    try {
      await Promise.race([acceptance, done]);
      // wrapped: an async function returning the promise itself would wait for it
      return { done };
    } catch (err) {
      if (started || l.signal?.aborted === true) throw err;
      if (silent.signal.aborted) {
        l.env.log.warn({ session: l.identity.sessionId, pod, attempt }, `the first exec stayed silent for ${SILENT_ATTEMPT_MS / 1000} s: trying again`);
      } else if (!notAcceptedYet(err)) {
        throw err;
      }
    } finally {
      if (!started) clearTimeout(timer);
    }
    await pause(monitor, attempt);
  }
}

/** Tries the probe exec until the container takes it (attempts start once the Pod is scheduled). */
export async function probeUntilReady(l: KubeLaunchState, monitor: PodMonitor, pod: string, reusedName: boolean): Promise<ProbeResult> {
  for (let attempt = 0; ; attempt++) {
    while (!(await nextAttempt(l, monitor, reusedName, attempt))) {
      // not due yet
    }
    try {
      const res = await l.kube.exec.exec({
        namespace: l.namespace,
        pod,
        container: l.profile.mainContainer,
        command: ['sh', '-c', PROBE_SCRIPT],
        ...(l.signal ? { signal: l.signal } : {}),
      });
      if (res.exitCode === 0) return parseProbeOutput(res.stdout);
      throw new LaunchError(STAGE.podReady, 'ProbeFailed', `the image probe exited with ${res.exitCode} (is /bin/sh in the image?): ${res.stderr.trim().slice(-300)}`);
    } catch (err) {
      // the probe only reads: one whose stream broke after it started is tried again too
      if (err instanceof LaunchError || !notAcceptedYet(err)) throw err;
    }
    await pause(monitor, attempt);
  }
}
