/**
 * Who an instance belongs to, built one way everywhere: Berth runs one task in one environment
 * per session, so the task and environment ids are the session id.
 * @module
 */
import type { InstanceIdentity } from '../executor.js';

/** The identity of instance `instanceId` of session `sessionId`. */
export function sessionIdentity(sessionId: string, instanceId: string): InstanceIdentity {
  return { instanceId, sessionId, taskId: sessionId, environmentId: sessionId };
}
