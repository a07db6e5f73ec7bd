/**
 * Pure stage bookkeeping: executor stage events → StageRecords (start/end times, duration, reason).
 * @module
 */
import type { StageEvent } from '../executors/executor.js';
import { MAX_STAGE_WAITS, type StageRecord } from './service.js';

/** Applies one stage event to the stage list of the current launch; returns the new list and the changed record. */
export function applyStageEvent(stages: readonly StageRecord[], event: StageEvent): { stages: StageRecord[]; record: StageRecord } {
  const at = event.at.toISOString();
  const list = [...stages];
  // the latest record of this stage that has not ended is the one to update
  let index = -1;
  for (let i = list.length - 1; i >= 0; i--) {
    const r = list[i];
    if (r && r.name === event.stage && r.endedAt === null) {
      index = i;
      break;
    }
  }
  let record: StageRecord;
  if (index === -1 || event.status === 'running' && list[index]?.status === 'running') {
    record = {
      name: event.stage,
      status: event.status,
      startedAt: at,
      endedAt: null,
      durationMs: null,
      reason: event.reason ?? null,
      message: event.message ?? null,
      ...(event.status === 'waiting' && event.reason !== undefined ? { waits: [{ at, reason: event.reason, message: event.message ?? '' }] } : {}),
    };
    if (event.status === 'succeeded' || event.status === 'failed') record = end(record, event.at);
    list.push(record);
    return { stages: list, record };
  }
  const current = list[index] as StageRecord;
  // A stage that succeeds no longer shows what it waited for as its reason: its waits keep that.
  const keep = event.status === 'waiting' || event.status === 'failed';
  record = {
    ...current,
    status: event.status,
    reason: event.reason ?? (keep ? current.reason : null),
    message: event.message ?? (keep ? current.message : null),
  };
  if (event.status === 'waiting' && event.reason !== undefined) record.waits = addWait(current.waits ?? [], { at, reason: event.reason, message: event.message ?? '' });
  if (event.status === 'succeeded' || event.status === 'failed') record = end(record, event.at);
  list[index] = record;
  return { stages: list, record };
}

function addWait(waits: NonNullable<StageRecord['waits']>, wait: NonNullable<StageRecord['waits']>[number]): NonNullable<StageRecord['waits']> {
  const last = waits[waits.length - 1];
  if (last && last.reason === wait.reason && last.message === wait.message) return waits;
  return [...waits, wait].slice(-MAX_STAGE_WAITS);
}

function end(record: StageRecord, at: Date): StageRecord {
  const started = Date.parse(record.startedAt);
  return { ...record, endedAt: at.toISOString(), durationMs: Number.isNaN(started) ? null : Math.max(0, at.getTime() - started) };
}

/** Marks every stage that is still running or waiting as failed (used when a launch is abandoned). */
export function failOpenStages(stages: readonly StageRecord[], at: Date, message: string): StageRecord[] {
  return stages.map((s) => (s.endedAt === null ? { ...end(s, at), status: 'failed' as const, reason: s.reason ?? 'Interrupted', message } : s));
}
