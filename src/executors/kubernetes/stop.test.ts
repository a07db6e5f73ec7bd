import { describe, expect, it } from 'vitest';
import type { ExecutorInstance } from '../executor.js';
import { LABEL, META } from './constants.js';
import { apiError } from './testing/fake-kube.js';
import { KubeHarness, NAMESPACE, POD_NAME, PVC_NAME, rejection, testProfile } from './testing/harness.js';

/** The reads and deletes a stop sent, as `op uid` (deletes) or `op` (reads). */
function trail(h: KubeHarness): string[] {
  return h.objects.calls.filter((c) => /^(get|delete)/.test(c.op)).map((c) => (c.preconditions ? `${c.op} ${c.preconditions.uid}` : c.op));
}

async function launched(h: KubeHarness): Promise<{ instance: ExecutorInstance; podUid: string; pvcUid: string }> {
  const instance = await h.launch();
  h.resetRecords();
  return { instance, podUid: instance.metadata[META.podUid] ?? '', pvcUid: instance.metadata[META.pvcUid] ?? '' };
}

describe('stop', () => {
  it('deletes the recorded Pod by UID and resourceVersion, keeps the claim, and records that the Pod went', async () => {
    const h = new KubeHarness();
    const { instance, podUid } = await launched(h);
    const version = h.objects.find('Pod', NAMESPACE, POD_NAME)?.metadata?.resourceVersion;
    const result = await h.executor.stopInstance(h.stopTarget(instance.metadata, instance), { destroy: false, reason: 'user_stop' });

    expect(trail(h)).toEqual(['getPod', `deletePod ${podUid}`]);
    expect(h.objects.callsOf('deletePod')[0]?.preconditions).toEqual({ uid: podUid, resourceVersion: version });
    expect(h.objects.find('PVC', NAMESPACE, PVC_NAME)).toBeDefined();
    expect(result).toEqual({ metadata: { [META.podReclaimed]: 'true' } });
  });

  it('stops only the agent of an emptyDir session (deleting the Pod would lose the work)', async () => {
    const h = new KubeHarness({ profile: testProfile({ mode: 'empty_dir' }) });
    const { instance } = await launched(h);
    await h.executor.stopInstance(h.stopTarget(instance.metadata, instance), { destroy: false, reason: 'user_stop' });
    expect(trail(h)).toEqual([]);
    await expect(instance.control.getInstance(instance.identity.instanceId)).rejects.toThrow(/404|no instance/);
  });
});

describe('rm (destroy)', () => {
  it('verifies both objects, stops the agent, runs the cleanup script, then deletes the Pod and the claim by UID', async () => {
    const h = new KubeHarness({ profile: testProfile({ cleanupScript: 'git add -A' }) });
    const { instance, podUid, pvcUid } = await launched(h);
    await h.executor.stopInstance(h.stopTarget(instance.metadata, instance), { destroy: true, reason: 'session_removed' });

    expect(trail(h)).toEqual(['getPod', 'getPVC', `deletePod ${podUid}`, `deletePVC ${pvcUid}`]);
    expect(h.agentctl.requests).toEqual([`DELETE /api/v1/instances/${instance.identity.instanceId}`]);
    expect(h.exec.calls.map((c) => [c.kind, c.podUid])).toEqual([['cleanup', podUid]]);
    expect(h.exec.calls[0]?.command[2]).toContain('git add -A');
    expect(h.objects.find('Pod', NAMESPACE, POD_NAME)).toBeUndefined();
    expect(h.objects.find('PVC', NAMESPACE, PVC_NAME)).toBeUndefined();
  });

  it('never deletes an existing claim', async () => {
    const h = new KubeHarness({ profile: testProfile({ mode: 'existing_claim', claimName: 'shared' }) });
    h.objects.put('PVC', { metadata: { name: 'shared', namespace: NAMESPACE }, status: { phase: 'Bound' } });
    const { instance, podUid } = await launched(h);
    await h.executor.stopInstance(h.stopTarget(instance.metadata), { destroy: true, reason: 'session_removed' });
    expect(trail(h)).toEqual(['getPod', `deletePod ${podUid}`]);
    expect(h.objects.find('PVC', NAMESPACE, 'shared')).toBeDefined();
  });

  it('deletes nothing at all when the recorded Pod was replaced by another object', async () => {
    const h = new KubeHarness();
    const { instance } = await launched(h);
    h.objects.remove('Pod', NAMESPACE, POD_NAME);
    const foreign = h.objects.put('Pod', { metadata: { name: POD_NAME, namespace: NAMESPACE } });
    const err = await rejection(h.executor.stopInstance(h.stopTarget(instance.metadata), { destroy: true, reason: 'session_removed' }));

    expect(err.name).toBe('CleanupRefusedError');
    expect(err.message).toContain(`UID ${foreign.metadata?.uid}`);
    expect(trail(h).filter((t) => t.startsWith('delete'))).toEqual([]);
    expect(h.objects.find('PVC', NAMESPACE, PVC_NAME)).toBeDefined();
    expect(h.exec.calls).toEqual([]);
  });

  it('deletes nothing when the recorded Pod no longer carries its ownership labels', async () => {
    const h = new KubeHarness();
    const { instance } = await launched(h);
    h.objects.update('Pod', NAMESPACE, POD_NAME, (p) => delete p.metadata?.labels?.[LABEL.sessionId]);
    const err = await rejection(h.executor.stopInstance(h.stopTarget(instance.metadata), { destroy: true, reason: 'session_removed' }));
    expect(err.name).toBe('CleanupRefusedError');
    expect(trail(h).filter((t) => t.startsWith('delete'))).toEqual([]);
  });

  it('fails, and leaves the claim, when the Pod cannot be deleted (the caller keeps the row)', async () => {
    const h = new KubeHarness();
    const { instance, podUid } = await launched(h);
    h.objects.failOn('deletePod', apiError(500, 'InternalError', 'etcd timeout'));
    const err = await rejection(h.executor.stopInstance(h.stopTarget(instance.metadata), { destroy: true, reason: 'session_removed' }));
    expect(err.message).toMatch(/etcd timeout/);
    expect(trail(h)).toEqual(['getPod', 'getPVC', `deletePod ${podUid}`]);
    expect(h.objects.find('PVC', NAMESPACE, PVC_NAME)).toBeDefined();
  });

  it('from a row left at pod_creating: finds the Pod by its create nonce and deletes it by UID; a stranger under the name is left alone', async () => {
    const h = new KubeHarness();
    const instance = await h.launch();
    const creating = rowAt(h, 'pod_creating');
    expect(creating[META.podUid]).toBeUndefined();
    h.resetRecords();
    await h.executor.stopInstance(h.stopTarget(creating), { destroy: true, reason: 'session_removed' });
    expect(trail(h).filter((t) => t.startsWith('delete'))).toEqual([`deletePod ${instance.metadata[META.podUid]}`, `deletePVC ${instance.metadata[META.pvcUid]}`]);

    const again = new KubeHarness();
    await again.launch();
    const row = rowAt(again, 'pod_creating');
    again.objects.remove('Pod', NAMESPACE, POD_NAME);
    again.objects.put('Pod', { metadata: { name: POD_NAME, namespace: NAMESPACE } });
    again.resetRecords();
    await again.executor.stopInstance(again.stopTarget(row), { destroy: true, reason: 'session_removed' });
    expect(again.objects.callsOf('deletePod')).toEqual([]);
    expect(again.objects.find('Pod', NAMESPACE, POD_NAME)).toBeDefined();
  });
});

/** The metadata a launch checkpointed at `state` (what the row says when the controller died there). */
function rowAt(h: KubeHarness, state: string): Readonly<Record<string, string>> {
  const row = h.recorded.checkpoints.find((c) => c.state === state)?.metadata;
  if (row === undefined) throw new Error(`no checkpoint ${state}`);
  return row;
}
