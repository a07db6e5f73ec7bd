import { describe, expect, it } from 'vitest';
import { ANNOTATION, LABEL, LABEL_VALUE } from './constants.js';
import { KubeHarness, NAMESPACE, POD_NAME, PVC_NAME } from './testing/harness.js';

const berthLabels = (session: string): Record<string, string> => ({ [LABEL.managedBy]: LABEL_VALUE.managedBy, [LABEL.sessionId]: session, [LABEL.instanceId]: `i-${session}` });
const old = new Date(Date.now() - 3_600_000);

describe('sweep of unrecorded objects', () => {
  it("deletes this installation's unrecorded Pod, then its claim, each by UID and resourceVersion", async () => {
    const h = new KubeHarness();
    const instance = await h.launch();
    await instance.close();
    h.resetRecords();
    const pod = h.objects.find('Pod', NAMESPACE, POD_NAME);
    const pvc = h.objects.find('PVC', NAMESPACE, PVC_NAME);
    const report = await h.executor.sweepUnrecorded(() => false, { minAgeMs: 0 });

    expect(report.deleted).toHaveLength(2);
    expect(report.errors).toEqual([]);
    expect(h.objects.calls.filter((c) => c.op.startsWith('delete')).map((c) => [c.op, c.preconditions])).toEqual([
      ['deletePod', { uid: pod?.metadata?.uid, resourceVersion: pod?.metadata?.resourceVersion }],
      ['deletePVC', { uid: pvc?.metadata?.uid, resourceVersion: pvc?.metadata?.resourceVersion }],
    ]);
  });

  it('keeps recorded and young objects, and only reports those of another installation or of none', async () => {
    const h = new KubeHarness();
    await h.launch();
    h.objects.put('Pod', { metadata: { name: 'other-berth', namespace: NAMESPACE, labels: berthLabels('s2'), annotations: { [ANNOTATION.installation]: 'install-2' }, creationTimestamp: old } });
    h.objects.put('Pod', { metadata: { name: 'no-installation', namespace: NAMESPACE, labels: berthLabels('s3'), creationTimestamp: old } });
    h.objects.put('Pod', { metadata: { name: 'not-berth', namespace: NAMESPACE, labels: { app: 'x' }, creationTimestamp: old } });
    h.resetRecords();

    const recorded = await h.executor.sweepUnrecorded((o) => o.instanceId === 'inst-1', { minAgeMs: 0 });
    expect(recorded.deleted).toEqual([]);
    expect(recorded.foreign.map((f) => f.object)).toEqual([`Pod ${NAMESPACE}/other-berth (session s2)`, `Pod ${NAMESPACE}/no-installation (session s3)`]);

    const young = await h.executor.sweepUnrecorded(() => false, { minAgeMs: 3_600_000 });
    expect(young.deleted).toEqual([]);
    expect(young.waiting).toBe(2);
    expect(h.objects.calls.filter((c) => c.op.startsWith('delete'))).toEqual([]);
  });
});
