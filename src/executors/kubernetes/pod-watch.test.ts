import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { podTrouble, type WatchedPod } from './pod-watch.js';

const watched: WatchedPod = { podName: 'berth-x', podUid: 'uid-1', mainContainer: 'agent', restartCount: 0 };
const pod = (over: { uid?: string; phase?: string; reason?: string; message?: string; deleting?: boolean; restarts?: number; last?: { reason?: string; exitCode: number; signal?: number } } = {}): V1Pod => ({
  metadata: { name: 'berth-x', uid: over.uid ?? 'uid-1', ...(over.deleting ? { deletionTimestamp: new Date() } : {}) },
  status: {
    phase: over.phase ?? 'Running',
    ...(over.reason ? { reason: over.reason } : {}),
    ...(over.message ? { message: over.message } : {}),
    containerStatuses: [
      { name: 'agent', restartCount: over.restarts ?? 0, image: 'i', imageID: 'i', ready: true, ...(over.last ? { lastState: { terminated: over.last } } : {}) },
    ],
  },
});

describe('podTrouble', () => {
  it('finds nothing wrong with the recorded, running Pod', () => {
    expect(podTrouble(watched, 'ns', pod())).toBeNull();
    expect(podTrouble({ ...watched, restartCount: null }, 'ns', pod({ restarts: 3 })), 'an unknown baseline is no restart').toBeNull();
  });

  it('finds nothing wrong with a Pod still behind a scheduling gate (it waits to be scheduled; not a failure)', () => {
    const gated: V1Pod = {
      metadata: { name: 'berth-x', uid: 'uid-1' },
      spec: { containers: [{ name: 'agent' }], schedulingGates: [{ name: 'berth.dev/workspace-claim' }] },
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] },
    };
    expect(podTrouble(watched, 'ns', gated)).toBeNull();
    expect(podTrouble({ ...watched, restartCount: null }, 'ns', gated)).toBeNull();
  });

  it('reports a Pod that is gone, or replaced by another under its name, as deleted', () => {
    expect(podTrouble(watched, 'ns', undefined)).toEqual({ reason: 'PodDeleted', message: 'Pod ns/berth-x was deleted' });
    expect(podTrouble(watched, 'ns', pod({ uid: 'uid-2' }))?.reason).toBe('PodDeleted');
  });

  it('names deletion, eviction, failure, completion and a container restart', () => {
    expect(podTrouble(watched, 'ns', pod({ deleting: true }))?.reason).toBe('PodDeleting');
    expect(podTrouble(watched, 'ns', pod({ phase: 'Failed', reason: 'Evicted', message: 'low on memory' }))).toEqual({
      reason: 'PodEvicted',
      message: 'Pod ns/berth-x failed (Evicted: low on memory)',
    });
    expect(podTrouble(watched, 'ns', pod({ phase: 'Failed' }))).toEqual({ reason: 'PodFailed', message: 'Pod ns/berth-x failed' });
    expect(podTrouble(watched, 'ns', pod({ phase: 'Succeeded' }))?.reason).toBe('PodCompleted');
    expect(podTrouble(watched, 'ns', pod({ restarts: 1 }))).toEqual({
      reason: 'ContainerRestarted',
      message: 'Pod ns/berth-x: its main container restarted (1 restarts, 0 when Berth connected)',
    });
  });

  it('names an OOM kill and says what to change; another restart says how the container ended', () => {
    const oom = podTrouble(watched, 'ns', pod({ restarts: 1, last: { reason: 'OOMKilled', exitCode: 137 } }));
    expect(oom?.reason).toBe('OOMKilled');
    expect(oom?.message).toMatch(/over its memory limit \(OOMKilled, exit code 137; 1 restarts/);
    expect(oom?.message).toMatch(/raise resources\.limits\.memory/);
    expect(podTrouble(watched, 'ns', pod({ restarts: 2, last: { reason: 'Error', exitCode: 1 } }))).toEqual({
      reason: 'ContainerRestarted',
      message: 'Pod ns/berth-x: its main container restarted after it ended (Error, exit code 1) (2 restarts, 0 when Berth connected)',
    });
  });
});
