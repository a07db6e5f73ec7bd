import { describe, expect, it } from 'vitest';
import { applyStageEvent, failOpenStages } from './stages.js';

const t = (ms: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms));

describe('applyStageEvent', () => {
  it('opens a stage on running and closes it with a duration on succeeded', () => {
    const a = applyStageEvent([], { stage: 'workspace', status: 'running', at: t(0) });
    expect(a.record).toMatchObject({ name: 'workspace', status: 'running', endedAt: null, durationMs: null });
    const b = applyStageEvent(a.stages, { stage: 'workspace', status: 'succeeded', at: t(250) });
    expect(b.stages).toHaveLength(1);
    expect(b.record).toMatchObject({ status: 'succeeded', durationMs: 250, endedAt: t(250).toISOString() });
  });

  it('records waiting reasons and clears them when running again', () => {
    let s = applyStageEvent([], { stage: 'pod_ready', status: 'running', at: t(0) }).stages;
    s = applyStageEvent(s, { stage: 'pod_ready', status: 'waiting', at: t(5), reason: 'ImagePullBackOff', message: 'pulling' }).stages;
    expect(s[0]).toMatchObject({ status: 'waiting', reason: 'ImagePullBackOff', message: 'pulling' });
    s = applyStageEvent(s, { stage: 'pod_ready', status: 'running', at: t(6) }).stages;
    expect(s[0]).toMatchObject({ status: 'running', reason: null, message: null });
  });

  it('keeps the failure reason and message', () => {
    let s = applyStageEvent([], { stage: 'workspace', status: 'running', at: t(0) }).stages;
    s = applyStageEvent(s, { stage: 'workspace', status: 'failed', at: t(9), reason: 'CloneFailed', message: 'repository.url: …' }).stages;
    expect(s[0]).toMatchObject({ status: 'failed', reason: 'CloneFailed', durationMs: 9 });
  });

  it('starts a new record for a stage that runs again after it ended', () => {
    let s = applyStageEvent([], { stage: 'agentctl_connect', status: 'running', at: t(0) }).stages;
    s = applyStageEvent(s, { stage: 'agentctl_connect', status: 'failed', at: t(1) }).stages;
    s = applyStageEvent(s, { stage: 'agentctl_connect', status: 'running', at: t(2) }).stages;
    expect(s.map((r) => r.status)).toEqual(['failed', 'running']);
  });

  it('records an end event without a start as a closed stage', () => {
    const { stages } = applyStageEvent([], { stage: 'x', status: 'succeeded', at: t(3) });
    expect(stages[0]).toMatchObject({ status: 'succeeded', durationMs: 0 });
  });
});

describe('stage waits', () => {
  it('keeps every distinct wait in order, and a succeeded stage no longer shows the last one as its reason', () => {
    let s = applyStageEvent([], { stage: 'pod_ready', status: 'running', at: t(0) }).stages;
    s = applyStageEvent(s, { stage: 'pod_ready', status: 'waiting', at: t(5), reason: 'Unschedulable', message: '0/1 nodes are available' }).stages;
    s = applyStageEvent(s, { stage: 'pod_ready', status: 'waiting', at: t(6), reason: 'Unschedulable', message: '0/1 nodes are available' }).stages;
    s = applyStageEvent(s, { stage: 'pod_ready', status: 'waiting', at: t(9), reason: 'Pulling', message: 'pulling image' }).stages;
    expect(s[0]).toMatchObject({ status: 'waiting', reason: 'Pulling' });
    s = applyStageEvent(s, { stage: 'pod_ready', status: 'succeeded', at: t(20) }).stages;
    expect(s[0]).toMatchObject({ status: 'succeeded', reason: null, message: null, durationMs: 20 });
    expect(s[0]?.waits).toEqual([
      { at: t(5).toISOString(), reason: 'Unschedulable', message: '0/1 nodes are available' },
      { at: t(9).toISOString(), reason: 'Pulling', message: 'pulling image' },
    ]);
  });

  it('keeps the reason of a failed stage', () => {
    let s = applyStageEvent([], { stage: 'pod_ready', status: 'waiting', at: t(0), reason: 'ErrImagePull', message: 'not found' }).stages;
    s = applyStageEvent(s, { stage: 'pod_ready', status: 'failed', at: t(3) }).stages;
    expect(s[0]).toMatchObject({ status: 'failed', reason: 'ErrImagePull', message: 'not found' });
  });
});

describe('failOpenStages', () => {
  it('fails only the stages that have not ended', () => {
    let s = applyStageEvent([], { stage: 'a', status: 'running', at: t(0) }).stages;
    s = applyStageEvent(s, { stage: 'a', status: 'succeeded', at: t(1) }).stages;
    s = applyStageEvent(s, { stage: 'b', status: 'running', at: t(2) }).stages;
    const out = failOpenStages(s, t(10), 'controller restarted');
    expect(out.map((r) => [r.name, r.status])).toEqual([['a', 'succeeded'], ['b', 'failed']]);
    expect(out[1]).toMatchObject({ reason: 'Interrupted', message: 'controller restarted', durationMs: 8 });
  });
});
