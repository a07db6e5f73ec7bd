/**
 * Kubernetes Events of a session's Pod and PVC as launch progress (issue 8: within a second of the
 * cluster knowing why a launch is stuck, the user knows too).
 * @module
 */
import type { CoreV1Event } from '@kubernetes/client-node';
import { sanitizeKubeText } from './text.js';

interface EventDescription {
  warning: boolean;
  /** The Event's reason (`FailedScheduling`, `FailedMount`, `ProvisioningFailed`, `BackOff`, `Pulling` …). */
  reason: string;
  /** Sanitized message, with the repeat count when the Event recurred. */
  message: string;
  /** `Pod` or `PersistentVolumeClaim`, and the object's name. */
  object: string;
}

/** Describes an Event (Warning or Normal); null when it has neither reason nor message. */
export function describeEvent(event: CoreV1Event): EventDescription | null {
  const reason = event.reason ?? '';
  const message = (event.message ?? '').trim();
  if (reason === '' && message === '') return null;
  const count = event.series?.count ?? event.count ?? 1;
  const kind = event.involvedObject.kind ?? 'object';
  return {
    warning: event.type === 'Warning',
    reason: reason === '' ? 'Event' : sanitizeKubeText(reason),
    message: `${sanitizeKubeText(message)}${count > 1 ? ` (x${count})` : ''}`,
    object: `${kind}/${event.involvedObject.name ?? ''}`,
  };
}
