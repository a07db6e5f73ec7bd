import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { whyGone } from './revive.js';

const failed = (reason?: string, message?: string): V1Pod => ({ status: { phase: 'Failed', ...(reason ? { reason } : {}), ...(message ? { message } : {}) } });
const evictedByWatch = { reason: 'PodEvicted', message: 'Pod ns/berth-x failed (Evicted: The node was low on resource: memory.)' };

describe('whyGone: why a ready session gets a new Pod', () => {
  it('names a deleted, a deleting, an evicted, a failed and a completed Pod', () => {
    expect(whyGone(undefined).reason).toBe('PodDeleted');
    expect(whyGone({ metadata: { deletionTimestamp: new Date() }, status: { phase: 'Running' } }).reason).toBe('PodDeleting');
    expect(whyGone(failed('Evicted', 'low on memory'))).toEqual({ reason: 'PodEvicted', message: "the session's Pod failed (Evicted: low on memory)" });
    expect(whyGone(failed('DeadlineExceeded'))).toEqual({ reason: 'PodFailed', message: "the session's Pod failed (DeadlineExceeded)" });
    expect(whyGone({ status: { phase: 'Succeeded' } }).reason).toBe('PodCompleted');
  });

  it('keeps an eviction the watch saw when the status no longer carries its reason', () => {
    expect(whyGone(failed(), evictedByWatch)).toEqual(evictedByWatch);
    expect(whyGone(failed()).reason).toBe('PodFailed');
  });

  it('believes the Pod over the watch when the Pod still says why', () => {
    expect(whyGone(failed('DeadlineExceeded'), evictedByWatch).reason).toBe('PodFailed');
    expect(whyGone(undefined, evictedByWatch).reason).toBe('PodDeleted');
    expect(whyGone(failed(), { reason: 'OOMKilled', message: 'the agent container was OOM-killed' }).reason).toBe('PodFailed');
  });
});
