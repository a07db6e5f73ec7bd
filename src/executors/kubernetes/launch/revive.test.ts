import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ExecutorInstance, InstanceSecrets } from '../../executor.js';
import { META } from '../constants.js';
import { apiError } from '../testing/fake-kube.js';
import { KubeHarness, NAMESPACE, POD_NAME, PVC_NAME, rejection, testProfile } from '../testing/harness.js';
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

/** A launched session, as recorded (the harness's records cleared), and the request that resumes it. */
async function launched(h: KubeHarness): Promise<{ metadata: Record<string, string>; secrets: InstanceSecrets; podUid: string }> {
  const instance = await h.launch();
  await instance.close();
  h.resetRecords();
  return { metadata: { ...instance.metadata }, secrets: instance.secrets, podUid: instance.metadata[META.podUid] ?? '' };
}

function resume(h: KubeHarness, s: { metadata: Record<string, string>; secrets: InstanceSecrets }): Promise<ExecutorInstance> {
  return h.executor.createInstance(h.request({ previous: s }));
}

const mutations = (h: KubeHarness): string[] => h.objects.calls.filter((c) => /^(create|delete)/.test(c.op)).map((c) => `${c.op} ${c.preconditions?.uid ?? c.created ?? ''}`.trim());

describe('resume: reconnect to the recorded Pod', () => {
  it('reconnects to a running Pod with the recorded token: nothing created, deleted, executed or checkpointed', async () => {
    const h = new KubeHarness();
    const s = await launched(h);
    const instance = await resume(h, s);

    expect(instance.revived).toBe(false);
    expect(instance.secrets).toEqual(s.secrets);
    expect(mutations(h)).toEqual([]);
    expect(h.exec.calls).toEqual([]);
    expect(h.agentctl.handshakes).toEqual([]);
    expect(h.states).toEqual([]);
    expect(h.stageTrail).toEqual(['agentctl_connect:running', 'agentctl_connect:succeeded']);
  });

  it('after a container restart, writes a fresh nonce into the Pod, trades it and hands it back to record', async () => {
    const h = new KubeHarness();
    const s = await launched(h);
    h.agentctl.restart(s.podUid);
    const instance = await resume(h, s);

    expect(instance.revived).toBe(true);
    expect(h.exec.calls.map((c) => [c.kind, c.podUid])).toEqual([['nonce', s.podUid]]);
    expect(h.agentctl.handshakes.map((x) => x.accepted)).toEqual([false, true]);
    expect(h.agentctl.handshakes[0]?.nonce).toBe(s.secrets.bootstrapNonce);
    expect(instance.secrets.bootstrapNonce).toBe(h.agentctl.handshakes[1]?.nonce);
    expect(instance.secrets.bootstrapNonce).not.toBe(s.secrets.bootstrapNonce);
    expect(mutations(h)).toEqual([]);
  });
});

describe('resume: a new Pod on the recorded claim', () => {
  async function stopped(h: KubeHarness): Promise<{ metadata: Record<string, string>; secrets: InstanceSecrets; podUid: string }> {
    const s = await launched(h);
    const result = await h.executor.stopInstance(h.stopTarget(s.metadata), { destroy: false, reason: 'user_stop' });
    h.resetRecords();
    return { ...s, metadata: { ...s.metadata, ...(result ? result.metadata : {}) } };
  }

  it('creates the Pod under the recorded name after a stop, checkpointed like a launch, without a clone', async () => {
    const h = new KubeHarness();
    const s = await stopped(h);
    const instance = await resume(h, s);
    const pod = h.objects.find('Pod', NAMESPACE, POD_NAME);

    expect(h.stageTrail).toEqual(['storage', 'pod_ready', 'bootstrap', 'agentctl_connect'].flatMap((st) => [`${st}:running`, `${st}:succeeded`]));
    expect(h.states).toEqual(['pod_creating', 'pod_created', 'pod_admitted', 'bootstrapped', 'agentctl_connected']);
    expect(mutations(h)).toEqual([`createPod ${pod?.metadata?.uid}`]);
    expect(pod?.metadata?.uid).not.toBe(s.podUid);
    expect(instance.metadata[META.podUid]).toBe(pod?.metadata?.uid);
    expect(instance.metadata[META.pvcUid]).toBe(s.metadata[META.pvcUid]);
    expect(instance.replaced?.reason).toBe('PodDeleted');
    const bootstrap = h.exec.callsOf('bootstrap');
    expect(bootstrap.length).toBeGreaterThan(0);
    for (const c of bootstrap) expect(c.command.join(' ')).not.toContain('git.example');
    expect(instance.secrets.bootstrapNonce).not.toBe(s.secrets.bootstrapNonce);
  });

  it('deletes only the Pod it created when the replacement fails; the claim and the row stay', async () => {
    const h = new KubeHarness();
    const s = await stopped(h);
    h.exec.handle = (c) => (c.kind === 'bootstrap' ? { exitCode: 75 } : undefined);
    const err = await rejection(resume(h, s));
    const created = h.objects.callsOf('createPod')[0]?.created;

    expect(err.stage).toBe('bootstrap');
    expect(err.reason).toBe('PrepareFailed');
    expect(mutations(h)).toEqual([`createPod ${created}`, `deletePod ${created}`]);
    expect(h.stageTrail.filter((x) => x.endsWith(':failed'))).toEqual(['bootstrap:failed']);
    expect(h.recorded.releases).toBe(0);
    expect(h.objects.find('PVC', NAMESPACE, PVC_NAME)?.metadata?.uid).toBe(s.metadata[META.pvcUid]);
  });

  it('surfaces a failed delete of the replacement Pod', async () => {
    const h = new KubeHarness();
    const s = await stopped(h);
    h.exec.handle = (c) => (c.kind === 'bootstrap' ? { exitCode: 75 } : undefined);
    h.objects.failOn('deletePod', apiError(500, 'InternalError', 'etcd timeout'));
    const err = await rejection(resume(h, s));
    expect(err.reason).toBe('PrepareFailed');
    expect(err.rollbackErrors).toHaveLength(1);
    expect(err.message).toMatch(/rollback failed: .*etcd timeout/);
  });

  it('deletes the Pod an interrupted resume created but did not record, with a Reaped Event on it first, then creates its own', async () => {
    const h = new KubeHarness();
    const s = await stopped(h);
    await resume(h, s);
    const row = h.recorded.checkpoints.find((c) => c.state === 'pod_creating')?.metadata;
    const orphan = h.objects.find('Pod', NAMESPACE, POD_NAME)?.metadata?.uid;
    expect(row?.[META.pendingCreateDigest], 'the row names the create it did not live to record').toBeDefined();
    h.resetRecords();
    h.events.written.length = 0;

    await resume(h, { metadata: row!, secrets: s.secrets });
    const created = h.objects.callsOf('createPod')[0]?.created;
    expect(mutations(h)).toEqual([`deletePod ${orphan}`, `createPod ${created}`]);
    const reaped = h.events.written.filter((e) => e.reason === 'Reaped');
    expect(reaped).toHaveLength(1);
    expect(reaped[0]).toMatchObject({ regarding: { kind: 'Pod', name: POD_NAME, uid: orphan }, type: 'Normal', action: 'Delete' });
    expect(reaped[0]?.note).toMatch(/an earlier resume created it but did not live to record it/);
  });

  it('refuses a claim that is not the recorded one, before creating anything', async () => {
    const h = new KubeHarness();
    const s = await stopped(h);
    h.objects.remove('PVC', NAMESPACE, PVC_NAME);
    h.objects.put('PVC', { metadata: { name: PVC_NAME, namespace: NAMESPACE } });
    const err = await rejection(resume(h, s));
    expect([err.stage, err.reason]).toEqual(['storage', 'ClaimReplaced']);
    expect(mutations(h)).toEqual([]);
  });
});

describe('resume: foreign and lost Pods', () => {
  it('never touches a same-name Pod with another UID', async () => {
    const h = new KubeHarness();
    const s = await launched(h);
    h.objects.remove('Pod', NAMESPACE, POD_NAME);
    const foreign = h.objects.put('Pod', { metadata: { name: POD_NAME, namespace: NAMESPACE } });
    h.resetRecords();
    const err = await rejection(resume(h, s));

    expect([err.stage, err.reason]).toEqual(['initialize', 'PodReplaced']);
    expect(mutations(h)).toEqual([]);
    expect(h.exec.calls).toEqual([]);
    expect(h.objects.find('Pod', NAMESPACE, POD_NAME)?.metadata?.uid).toBe(foreign.metadata?.uid);
  });

  it('reports the work lost when an emptyDir Pod is gone, and creates nothing', async () => {
    const h = new KubeHarness({ profile: testProfile({ mode: 'empty_dir' }) });
    const s = await launched(h);
    h.objects.remove('Pod', NAMESPACE, POD_NAME);
    h.resetRecords();
    const err = await rejection(resume(h, s));
    expect([err.stage, err.reason]).toEqual(['initialize', 'WorkspaceLost']);
    expect(mutations(h)).toEqual([]);
  });

  it('deletes its own failed Pod by UID (labels verified) before replacing it', async () => {
    const h = new KubeHarness();
    const s = await launched(h);
    h.objects.update('Pod', NAMESPACE, POD_NAME, (p) => (p.status = { phase: 'Failed', reason: 'Evicted', message: 'low on memory' }));
    h.resetRecords();
    const instance = await resume(h, s);
    const created = h.objects.callsOf('createPod')[0]?.created;
    expect(mutations(h)).toEqual([`deletePod ${s.podUid}`, `createPod ${created}`]);
    expect(instance.replaced?.reason).toBe('PodEvicted');
  });
});
