/**
 * Kubernetes Events about a session's objects, so `kubectl describe pod` and `kubectl get events`
 * tell the story Berth knows: a launch stage that failed (on the Pod, else the claim, written before
 * the rollback deletes them: an Event outlives its object for the cluster's event TTL), a Pod
 * replaced (on the new Pod, naming the old one and why; and on the old one while it still exists),
 * every object the sweep deletes, and a Pod an interrupted resume left unrecorded (on it, before the
 * delete).
 *
 * Best effort: an Event that cannot be written (the Role lacks `create` on events.k8s.io events,
 * a slow API server) never fails a launch, a replacement or a sweep, and holds none of them up
 * longer than {@link EVENT_TIMEOUT_MS}. The first failure is logged once at warn with what to do;
 * later ones only at debug. Every note goes through the shared sanitizer (URLs cut to their
 * origin, the launch's secret values removed) and is capped at 1 KiB.
 * @module
 */
import { hostname } from 'node:os';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { sanitize } from '../../shared/sanitize.js';
import type { CreateInstanceRequest } from '../executor.js';
import { isLaunchError } from '../launch-kit/index.js';
import { isForbidden, type EventObjectRef, type EventRecord, type KubeEvents } from './kube/index.js';

/** `reportingController` of every Event Berth writes. */
export const REPORTING_CONTROLLER = 'berth.dev/controller';

/** The reasons of Berth's Events. */
export const EVENT_REASON = {
  launchFailed: 'LaunchFailed',
  replaced: 'Replaced',
  reaped: 'Reaped',
} as const;

/** How long one Event may take before it is given up (the caller then goes on). */
const EVENT_TIMEOUT_MS = 3_000;

/** The API server's limit on an Event's note, in bytes. */
const NOTE_MAX_BYTES = 1024;
/** Its limit on reportingInstance. */
const INSTANCE_MAX_LENGTH = 128;

/** One Event before the recorder stamps who wrote it and when. */
export type ObjectEvent = Omit<EventRecord, 'reportingController' | 'reportingInstance' | 'time'>;

interface EventRecorderOptions {
  log: Logger;
  /** `reportingInstance`. @default the host name */
  instance?: string;
  /** @default EVENT_TIMEOUT_MS */
  timeoutMs?: number;
}

export class EventRecorder {
  readonly #port: () => KubeEvents;
  readonly #log: Logger;
  readonly #instance: string;
  readonly #timeoutMs: number;
  #warned = false;

  /** `port` is read at each Event (the executor builds its client on first use). */
  constructor(port: () => KubeEvents, opts: EventRecorderOptions) {
    this.#port = port;
    this.#log = opts.log;
    this.#instance = (opts.instance ?? hostname()).slice(0, INSTANCE_MAX_LENGTH) || 'berth';
    this.#timeoutMs = opts.timeoutMs ?? EVENT_TIMEOUT_MS;
  }

  /** Writes `event` with its note sanitized (`secrets`: exact values to remove). Never rejects. */
  async emit(event: ObjectEvent, secrets: readonly (string | undefined)[] = []): Promise<void> {
    const record: EventRecord = { ...event, note: eventNote(event.note, secrets), reportingController: REPORTING_CONTROLLER, reportingInstance: this.#instance, time: new Date() };
    const signal = AbortSignal.timeout(this.#timeoutMs);
    try {
      await Promise.race([this.#port().create(record, signal), rejectOnAbort(signal)]);
    } catch (err) {
      this.#failed(err, record);
    }
  }

  #failed(err: unknown, record: EventRecord): void {
    const fields = { reason: record.reason, object: `${record.regarding.kind} ${record.regarding.namespace}/${record.regarding.name}`, error: sanitize(errorMessage(err)) };
    if (this.#warned) {
      this.#log.debug(fields, 'a Kubernetes Event was not written');
      return;
    }
    this.#warned = true;
    const what = isForbidden(err)
      ? `this identity may not create Events: add "create" on "events" in API group "events.k8s.io" to the Role bound to it in namespace ${record.regarding.namespace} (deploy/rbac.yaml has the rule)`
      : 'check that the API server answers (the Event was given up after a short wait)';
    this.#log.warn(fields, `cannot write Kubernetes Events about sessions' objects, so kubectl describe and kubectl get events do not show what Berth did; launches are not affected. To fix: ${what}. Not logged again.`);
  }
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = (): void => reject(new Error(`gave up after ${signal.reason instanceof Error ? signal.reason.message : 'a timeout'}`));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/** `note` sanitized (URLs cut to their origin, `secrets` removed) and cut to the API server's 1 KiB. */
export function eventNote(note: string, secrets: readonly (string | undefined)[] = []): string {
  const clean = sanitize(note, { urls: 'origin', secrets });
  if (Buffer.byteLength(clean) <= NOTE_MAX_BYTES) return clean;
  let out = '';
  let bytes = 0;
  const ellipsis = '…';
  for (const ch of clean) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > NOTE_MAX_BYTES - Buffer.byteLength(ellipsis)) break;
    out += ch;
    bytes += size;
  }
  return out + ellipsis;
}

/** Every secret value a launch holds (removed from the notes of its Events). */
export function launchSecrets(req: Pick<CreateInstanceRequest, 'secretEnv' | 'repositoryCredentials' | 'previous'>): string[] {
  const creds = req.repositoryCredentials;
  const previous = req.previous?.secrets;
  return [...Object.values(req.secretEnv), ...(creds ? [creds.username, creds.password] : []), ...(previous ? [previous.authToken, previous.bootstrapNonce] : [])];
}

/** A launch (or a replacement) failed: on its Pod, else its claim, before `aftermath` (the rollback) happens. */
export function launchFailedEvent(regarding: EventObjectRef, sessionId: string, err: unknown, aftermath: string): ObjectEvent {
  const stage = isLaunchError(err) ? err.stage : 'launch';
  const reason = isLaunchError(err) ? err.reason : 'Error';
  return {
    regarding,
    type: 'Warning',
    reason: EVENT_REASON.launchFailed,
    action: 'Launch',
    note: `Launch of session ${sessionId} failed at stage ${stage} (${reason}): ${errorMessage(err)}. ${aftermath}`,
  };
}

/** Why a Pod was replaced, as the replacement saw it (revive.ts `whyGone`). */
interface GoneReason {
  reason: string;
  message: string;
}

/** A replacement Pod runs: on it, naming the one it replaced and why. */
export function replacedEvent(created: EventObjectRef, old: EventObjectRef, sessionId: string, gone: GoneReason): ObjectEvent {
  return {
    regarding: created,
    related: old,
    type: 'Normal',
    reason: EVENT_REASON.replaced,
    action: 'Replace',
    note: `This Pod of session ${sessionId} replaces Pod ${old.namespace}/${old.name} (UID ${old.uid}): ${gone.reason}: ${gone.message}. It runs on the same workspace volume.`,
  };
}

/** The recorded Pod is about to be deleted for a replacement: on it, while it still exists. */
export function replacingEvent(old: EventObjectRef, sessionId: string, gone: GoneReason): ObjectEvent {
  return {
    regarding: old,
    type: 'Warning',
    reason: EVENT_REASON.replaced,
    action: 'Replace',
    note: `Berth replaces this Pod of session ${sessionId} (${gone.reason}: ${gone.message}): it is deleted and a new Pod of the same name starts on the same workspace volume.`,
  };
}

/** A Pod an interrupted resume created but never recorded, about to be deleted by the next resume: on it. */
export function reapedPendingPodEvent(pod: EventObjectRef, sessionId: string): ObjectEvent {
  return {
    regarding: pod,
    type: 'Normal',
    reason: EVENT_REASON.reaped,
    action: 'Delete',
    note: `Berth deletes this Pod of session ${sessionId}: an earlier resume created it but did not live to record it; the resume now under way creates the session's Pod anew.`,
  };
}
