/**
 * Applies a live event to the session it is about (pure). Events that need the whole view again
 * (a change of state moves the agent process too) are answered with `refetch: true`.
 * @module
 */
import type { SessionEvent, SessionView, StageRecord } from '../../../src/api/index.js';

function upsertStage(stages: readonly StageRecord[], stage: StageRecord): StageRecord[] {
  // A new launch/resume starts the stage list afresh: a stage named like an earlier one that starts
  // after it ended replaces it in place; a new name is appended.
  const i = stages.findIndex((s) => s.name === stage.name);
  if (i < 0) return [...stages, stage];
  const next = [...stages];
  next[i] = stage;
  return next;
}

export function applyEvent(session: SessionView, ev: SessionEvent): { session: SessionView; refetch: boolean } {
  switch (ev.type) {
    case 'stage':
      return { session: { ...session, stages: upsertStage(session.stages, ev.stage), updatedAt: ev.at }, refetch: false };
    case 'state':
      // The same state again (the snapshot a stream opens with) changes nothing else.
      if (ev.state === session.state) return { session: { ...session, error: ev.error }, refetch: false };
      return { session: { ...session, state: ev.state, error: ev.error, updatedAt: ev.at }, refetch: true };
    default:
      return { session, refetch: true };
  }
}

/**
 * Whether the list should poll this session: an ACP agent's turns and permission requests are no
 * session events, so a running one is read again now and then to see it waiting for a person.
 */
export function pollsAgentProgress(s: SessionView): boolean {
  return s.protocol === 'acp' && s.state === 'ready' && s.agentProcess?.status === 'running';
}
