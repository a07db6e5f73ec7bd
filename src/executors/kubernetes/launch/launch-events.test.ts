import { describe, expect, it } from 'vitest';
import type { InstanceSecrets } from '../../executor.js';
import type { Logger } from '../../../shared/logger.js';
import { META } from '../constants.js';
import type { EventRecord } from '../kube/index.js';
import { apiError } from '../testing/fake-kube.js';
import { KubeHarness, NAMESPACE, POD_NAME, PVC_NAME, rejection, testProfile } from '../testing/harness.js';

const SECRET = 'sk-live-secret-value-0123456789abcdef';

/** Makes the image pull fail once the Pod is created (stage pod_ready, reason ErrImagePull). */
function failPull(h: KubeHarness, message = 'manifest unknown'): void {
  h.objects.onPodCreated = () =>
    h.objects.update('Pod', NAMESPACE, POD_NAME, (p) => {
      p.spec = { containers: p.spec?.containers ?? [], nodeName: 'node-1' };
      p.status = { phase: 'Pending', containerStatuses: [{ name: 'agent', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull', message } } }] };
    });
}

/** Records, for each Event written, how many deletes had been sent by then. */
function deletesBeforeEach(h: KubeHarness): number[] {
  const seen: number[] = [];
  h.events.onCreate = () => seen.push(h.objects.calls.filter((c) => c.op.startsWith('delete')).length);
  return seen;
}

const refOf = (e: EventRecord | undefined): string => `${e?.regarding.kind ?? '?'} ${e?.regarding.name ?? '?'} ${e?.regarding.uid ?? '?'}`;

describe('Events of a failed launch', () => {
  it('writes LaunchFailed with the stage and reason on the Pod, before the rollback deletes it', async () => {
    const h = new KubeHarness();
    failPull(h);
    const before = deletesBeforeEach(h);
    const err = await rejection(h.launch());
    const podUid = h.objects.callsOf('createPod')[0]?.created;

    expect([err.stage, err.reason]).toEqual(['pod_ready', 'ErrImagePull']);
    expect(h.events.written.map((e) => [e.reason, e.type, refOf(e)])).toEqual([['LaunchFailed', 'Warning', `Pod ${POD_NAME} ${podUid}`]]);
    const note = h.events.written[0]?.note ?? '';
    expect(note).toMatch(/^Launch of session ses-1 failed at stage pod_ready \(ErrImagePull\): .*manifest unknown/);
    expect(note).toContain('Berth deletes what this launch created.');
    expect(before, 'the Event was written before any delete').toEqual([0]);
    expect(h.objects.callsOf('deletePod')).toHaveLength(1);
  });

  it('writes it on the claim when the Pod was never created, and nowhere when nothing was', async () => {
    const h = new KubeHarness();
    h.objects.failOn('createPod', apiError(403, 'Forbidden', 'pods is forbidden'));
    await rejection(h.launch());
    const pvcUid = h.objects.callsOf('createPVC')[0]?.created;
    expect(h.events.written.map((e) => [e.reason, refOf(e)])).toEqual([['LaunchFailed', `PersistentVolumeClaim ${PVC_NAME} ${pvcUid}`]]);
    expect(h.events.written[0]?.note).toContain('failed at stage pod_ready (Forbidden)');

    const empty = new KubeHarness({ profile: testProfile({ mode: 'empty_dir' }) });
    empty.objects.failOn('createPod', apiError(403, 'Forbidden', 'pods is forbidden'));
    await rejection(empty.launch());
    expect(empty.events.written).toEqual([]);
  });

  it('puts no secret of the launch in the note', async () => {
    const h = new KubeHarness();
    failPull(h, `pull failed: registry said Authorization: Bearer ${SECRET} and url https://u:p@registry.example/org/image?token=t`);
    const req = { ...h.request(), secretEnv: { API_KEY: SECRET }, repositoryCredentials: { username: 'git-user', password: 'git-password-123' } };
    await rejection(h.executor.createInstance(req));
    const note = h.events.written[0]?.note ?? '';
    expect(note).toContain('ErrImagePull');
    expect(note, 'the cluster\'s message is there, redacted').toContain('registry said');
    for (const leaked of [SECRET, 'u:p@', '/org/image', 'token=t']) expect(note).not.toContain(leaked);
  });

  it('fails the launch with its own error, rolled back as usual, when Events cannot be written', async () => {
    const warnings: string[] = [];
    const log: Logger = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (_o, m) => warnings.push(m ?? '') };
    const h = new KubeHarness({ logger: log });
    h.events.fail = apiError(403, 'Forbidden', 'events.events.k8s.io is forbidden');
    failPull(h);
    const err = await rejection(h.launch());
    expect([err.name, err.stage, err.reason]).toEqual(['LaunchError', 'pod_ready', 'ErrImagePull']);
    expect(err.rollbackErrors).toEqual([]);
    expect(h.objects.find('Pod', NAMESPACE, POD_NAME)).toBeUndefined();
    expect(h.objects.find('PVC', NAMESPACE, PVC_NAME)).toBeUndefined();
    expect(h.recorded.releases).toBe(1);

    failPull(h);
    await rejection(h.launch());
    expect(h.events.attempts).toBe(2);
    expect(warnings.filter((w) => w.includes('cannot write Kubernetes Events')), 'one warning, not one per Event').toHaveLength(1);
  });
});

/** A launched session after a stop (or with its Pod failed), as recorded, the harness's records cleared. */
async function launched(h: KubeHarness): Promise<{ metadata: Record<string, string>; secrets: InstanceSecrets; podUid: string }> {
  const instance = await h.launch();
  await instance.close();
  h.resetRecords();
  return { metadata: { ...instance.metadata }, secrets: instance.secrets, podUid: instance.metadata[META.podUid] ?? '' };
}

describe('Events of a replacement', () => {
  it('writes Replaced on the failed Pod before deleting it, and on the new Pod naming the old one and why', async () => {
    const h = new KubeHarness();
    const s = await launched(h);
    h.objects.update('Pod', NAMESPACE, POD_NAME, (p) => (p.status = { phase: 'Failed', reason: 'Evicted', message: 'low on memory' }));
    const before = deletesBeforeEach(h);
    const instance = await h.executor.createInstance(h.request({ previous: s }));
    const newUid = instance.metadata[META.podUid] ?? '';

    expect(h.events.written.map((e) => [e.reason, e.type, refOf(e)])).toEqual([
      ['Replaced', 'Warning', `Pod ${POD_NAME} ${s.podUid}`],
      ['Replaced', 'Normal', `Pod ${POD_NAME} ${newUid}`],
    ]);
    expect(before[0], 'the old Pod had its Event before its delete').toBe(0);
    expect(h.events.written[0]?.note).toContain('PodEvicted');
    expect(h.events.written[1]?.related?.uid).toBe(s.podUid);
    expect(h.events.written[1]?.note).toContain(`replaces Pod ${NAMESPACE}/${POD_NAME} (UID ${s.podUid}): PodEvicted: the session's Pod failed (Evicted: low on memory)`);
  });

  it('writes Replaced only on the new Pod when the old one is gone, and LaunchFailed when the replacement fails', async () => {
    const h = new KubeHarness();
    const s = await launched(h);
    h.objects.remove('Pod', NAMESPACE, POD_NAME);
    await h.executor.createInstance(h.request({ previous: s }));
    expect(h.events.written.map((e) => [e.reason, e.type])).toEqual([['Replaced', 'Normal']]);
    expect(h.events.written[0]?.note).toContain('PodDeleted');

    const again = new KubeHarness();
    const s2 = await launched(again);
    again.objects.remove('Pod', NAMESPACE, POD_NAME);
    again.exec.handle = (c) => (c.kind === 'bootstrap' ? { exitCode: 75 } : undefined);
    await rejection(again.executor.createInstance(again.request({ previous: s2 })));
    expect(again.events.written.map((e) => e.reason)).toEqual(['LaunchFailed']);
    expect(again.events.written[0]?.note).toMatch(/failed at stage bootstrap \(PrepareFailed\).*Berth deletes the new Pod; the workspace volume is kept\./);
  });
});

describe('Events of the sweep', () => {
  it('writes Reaped on each object it deletes, before the delete', async () => {
    const h = new KubeHarness();
    const instance = await h.launch();
    await instance.close();
    h.resetRecords();
    const pod = h.objects.find('Pod', NAMESPACE, POD_NAME);
    const pvc = h.objects.find('PVC', NAMESPACE, PVC_NAME);
    const before = deletesBeforeEach(h);
    await h.executor.sweepUnrecorded(() => false, { minAgeMs: 0 });

    expect(h.events.written.map((e) => [e.reason, e.type, refOf(e)])).toEqual([
      ['Reaped', 'Normal', `Pod ${POD_NAME} ${pod?.metadata?.uid}`],
      ['Reaped', 'Normal', `PersistentVolumeClaim ${PVC_NAME} ${pvc?.metadata?.uid}`],
    ]);
    expect(before).toEqual([0, 1]);
    expect(h.events.written[0]?.note).toMatch(/^Berth deletes this Pod of session ses-1: no session of this Berth records it/);
  });
});
