/**
 * Reads a Pod's or PVC's status as a launch sees it (spec §4.6, improved): waiting (with the
 * phase whose budget is running and the current reason), ready, or terminal (fail now, with the
 * reason). Pure: the watch loop in the I/O layer calls it on every update.
 * @module
 */
import type { V1ContainerStatus, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { EXIT_PREPARE_FAILED } from './start-script.js';
import { sanitizeKubeText } from './text.js';

type WaitPhase = 'scheduling' | 'pulling' | 'starting' | 'running';

export interface PodAssessment {
  kind: 'waiting' | 'ready' | 'terminal';
  /** Which wait budget applies: scheduling, pulling (volumes + image), starting (image present), running. */
  phase: WaitPhase;
  /** Short machine-readable reason (`Unschedulable`, `ErrImagePull`, `ContainerCreating` …). */
  reason: string;
  /** Human-readable, sanitized. */
  message: string;
}

/** Waiting reasons of a container that no retry fixes: the launch fails at once. */
const TERMINAL_WAITING = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull', 'CreateContainerConfigError', 'CreateContainerError']);

function detail(reason: string | undefined, message: string | undefined): string {
  return sanitizeKubeText([reason, message].filter((s) => s !== undefined && s !== '').join(': '));
}

/** The last few lines of a termination message, joined on one line. */
function lastLines(text: string): string {
  return text.trim().split('\n').slice(-5).join(' | ');
}

function lastExit(s: V1ContainerStatus): string {
  const t = s.lastState?.terminated;
  return t ? `last exit code ${t.exitCode}${t.reason ? ` (${sanitizeKubeText(t.reason)})` : ''}` : 'no exit recorded';
}

/**
 * Assesses `pod` for the main container `mainContainer`. Terminal: deletion, phase Failed or
 * Succeeded, an image or container-config error of any container, an init container that failed
 * or crash-loops, the main container terminated. The Ready condition is never required: the main
 * container idles in the start script until the bootstrap exec.
 */
export function assessPod(pod: V1Pod, mainContainer: string): PodAssessment {
  const status = pod.status ?? {};
  const terminal = (phase: WaitPhase, reason: string, message: string): PodAssessment => ({ kind: 'terminal', phase, reason, message });
  const waiting = (phase: WaitPhase, reason: string, message: string): PodAssessment => ({ kind: 'waiting', phase, reason, message });

  // Nothing in a launch deletes its own Pod before the rollback: someone else did, and it will not come back.
  if (pod.metadata?.deletionTimestamp) return terminal('scheduling', 'PodDeleted', 'the Pod was deleted before agentctl started');
  if (status.phase === 'Failed') return terminal('running', status.reason ?? 'PodFailed', `pod failed: ${detail(status.reason, status.message) || 'no reason given'}`);
  if (status.phase === 'Succeeded') return terminal('running', 'PodCompleted', 'pod completed before agentctl started');

  const scheduled = (status.conditions ?? []).find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False') {
    return waiting('scheduling', scheduled.reason ?? 'Unschedulable', `pod scheduling failed: ${detail(scheduled.reason, scheduled.message)}`);
  }
  if (scheduled?.status !== 'True' && !pod.spec?.nodeName) return waiting('scheduling', 'Pending', 'waiting for the scheduler');

  for (const s of status.initContainerStatuses ?? []) {
    const w = s.state?.waiting;
    const t = s.state?.terminated;
    if (w?.reason !== undefined && TERMINAL_WAITING.has(w.reason)) {
      return terminal(w.reason.includes('Image') ? 'pulling' : 'starting', w.reason, `init container ${s.name}: ${detail(w.reason, w.message)}`);
    }
    if (w?.reason === 'CrashLoopBackOff') return terminal('starting', 'InitContainerCrashLoop', `init container ${s.name} keeps failing (${lastExit(s)})`);
    if (t !== undefined && t.exitCode !== 0) {
      return terminal('starting', 'InitContainerFailed', `init container ${s.name} exited with code ${t.exitCode}${t.reason ? `: ${detail(t.reason, t.message)}` : ''}`);
    }
  }

  const main = (status.containerStatuses ?? []).find((s) => s.name === mainContainer);
  const initRunning = (status.initContainerStatuses ?? []).find((s) => s.state?.running !== undefined && !s.started);
  if (main === undefined || (main.state?.waiting?.reason === 'PodInitializing' && initRunning)) {
    if (initRunning) return waiting('starting', 'PodInitializing', `init container ${initRunning.name} is running`);
    return waiting('pulling', 'ContainerCreating', 'mounting volumes and pulling images');
  }
  const w = main.state?.waiting;
  const t = main.state?.terminated;
  if (main.state?.running !== undefined) {
    const restarts = main.restartCount > 0 ? ` (restarted ${main.restartCount} times, ${lastExit(main)})` : '';
    return { kind: 'ready', phase: 'running', reason: 'Running', message: `main container is running${restarts}` };
  }
  // prepare.sh failed (the start command's fixed status): the clone or setup script will fail the
  // same way after every back-off, so the launch stops now with its output (the termination message).
  const prepare = [t, main.lastState?.terminated].find((x) => x?.exitCode === EXIT_PREPARE_FAILED);
  if (prepare !== undefined) return terminal('running', 'PrepareFailed', `prepare.sh failed${prepare.message ? `: ${lastLines(sanitizeKubeText(prepare.message))}` : ''}`);
  if (t !== undefined) return terminal('running', 'ContainerTerminated', `main container terminated with code ${t.exitCode}${t.reason ? `: ${detail(t.reason, t.message)}` : ''}`);
  if (w?.reason !== undefined && TERMINAL_WAITING.has(w.reason)) {
    return terminal(w.reason.includes('Image') ? 'pulling' : 'starting', w.reason, `main container: ${detail(w.reason, w.message)}`);
  }
  if (w?.reason === 'CrashLoopBackOff' || main.restartCount > 0) {
    return waiting('starting', w?.reason ?? 'Restarting', `main container restarted ${main.restartCount} times (${lastExit(main)})`);
  }
  // No imageID yet: the kubelet is still mounting volumes or pulling (Events tell which).
  if (!main.imageID) return waiting('pulling', w?.reason ?? 'ContainerCreating', detail(w?.reason, w?.message) || 'pulling the image');
  return waiting('starting', w?.reason ?? 'Starting', detail(w?.reason, w?.message) || 'starting the main container');
}

interface PvcAssessment {
  kind: 'waiting' | 'ready' | 'terminal';
  reason: string;
  message: string;
}

/**
 * Pending (waiting; with a WaitForFirstConsumer class it binds only once the Pod is scheduled, so
 * the launch must not wait for Bound before creating the Pod), Bound (ready), Lost or being
 * deleted (terminal).
 */
export function assessPvc(pvc: V1PersistentVolumeClaim): PvcAssessment {
  if (pvc.metadata?.deletionTimestamp) return { kind: 'terminal', reason: 'ClaimDeleting', message: 'the claim is being deleted' };
  switch (pvc.status?.phase) {
    case 'Bound':
      return { kind: 'ready', reason: 'Bound', message: `bound to volume ${pvc.spec?.volumeName ?? '(unknown)'}` };
    case 'Lost':
      return { kind: 'terminal', reason: 'ClaimLost', message: 'the claim lost its volume' };
    default:
      return { kind: 'waiting', reason: 'Pending', message: 'waiting for a volume to be provisioned and bound' };
  }
}
