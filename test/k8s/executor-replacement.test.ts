// Pod replacement of a ready session: an evicted (Failed) Pod is replaced by itself and its agent
// started again; an agent that had exited before its Pod went is not re-run;
// an emptyDir session whose Pod is gone fails by itself with what to do, and no Pod is created for it.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRepo, type TestRepo } from './support/git.js';
import { berthOnCluster, execText, labelledLeftovers, FAST_AGENT_ENV, imageTemplate, launchReady, waitForOutput, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { waitForDiagnostic } from './support/failures.js';
import { waitFor } from './support/wait.js';

const env = clusterEnv();

describe.concurrent('kubernetes executor: Pod replacement of a ready session', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    repo = await createTestRepo('replacement', { 'README.md': '# replacement\n' });
    h = await berthOnCluster({
      prefix: 'replacement',
      profiles: {
        k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } },
        scratch: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'empty_dir' } },
      },
    });
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
  });

  const podsOf = (id: string) => h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${id}` }).then((l) => l.items);
  const deletePodOf = async (id: string) => {
    const [pod] = await podsOf(id);
    await h.core.deleteNamespacedPod({ namespace: h.ns.name, name: pod!.metadata!.name!, gracePeriodSeconds: 0 });
    for (let i = 0; i < 60 && (await podsOf(id)).some((p) => p.metadata?.uid === pod?.metadata?.uid); i++) await new Promise((r) => setTimeout(r, 500));
    return pod!;
  };

  it('an evicted (Failed) Pod is replaced without a command: reason PodEvicted, same PVC, the agent started again', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    await waitForOutput(c, v.id, /ready for instructions/);
    expect((await execText(c, v.id, ['sh', '-c', 'echo kept > evicted-file'])).exitCode).toBe(0);
    const [before] = await podsOf(v.id);
    const restarted = waitForDiagnostic(c, v.id, 'AgentRestarted', 'after the eviction');
    // what the kubelet records for an eviction (a terminal phase is final: the API server refuses to undo it)
    await h.core.patchNamespacedPodStatus(
      { namespace: h.ns.name, name: before!.metadata!.name!, body: { status: { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await restarted;
    const view = await c.get(v.id);
    expect(view.stages.find((s) => s.name === 'pod_replaced'), 'status says why').toMatchObject({ status: 'succeeded', reason: 'PodEvicted' });
    expect(view.stages.find((s) => s.name === 'pod_replaced')?.message).toMatch(/^replaced at .*failed \(Evicted: The node was low on resource: memory\.\)/);
    expect(view.agentProcess).toMatchObject({ id: 'agent-2', status: 'running' });
    expect((await execText(c, v.id, ['cat', 'evicted-file'])).stdout).toBe('kept\n');
    const [after] = await podsOf(v.id);
    expect(after?.metadata?.uid).not.toBe(before?.metadata?.uid);
    // kubectl describe pod tells it too: the new Pod names the one it replaced and why; the old one was told before it went
    const replacedAbout = async (uid: string) => (await h.core.listNamespacedEvent({ namespace: h.ns.name, fieldSelector: `involvedObject.uid=${uid}` })).items.filter((e) => e.reason === 'Replaced');
    const [onNew] = await waitFor('the Replaced Event on the new Pod', async () => {
      const events = await replacedAbout(after!.metadata!.uid!);
      return events.length > 0 ? events : undefined;
    });
    expect(onNew).toMatchObject({ type: 'Normal', action: 'Replace', reportingComponent: 'berth.dev/controller', related: { kind: 'Pod', uid: before!.metadata!.uid } });
    expect(onNew!.message).toContain(`replaces Pod ${h.ns.name}/${before!.metadata!.name} (UID ${before!.metadata!.uid}): PodEvicted: `);
    expect((await replacedAbout(before!.metadata!.uid!)).map((e) => e.type), 'the old Pod was told before its delete').toEqual(['Warning']);
    await c.remove(v.id);
    expect(await labelledLeftovers(h.core, h.ns.name, `berth.dev/session-id=${v.id}`)).toEqual([]);
  });

  it('an agent that had exited before its Pod was deleted is not run again in the new Pod', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    await waitForOutput(c, v.id, /ready for instructions/);
    await c.sendInput(v.id, '', { eof: true }); // the demo agent ends when its stdin closes
    for (let i = 0; i < 60 && (await c.get(v.id)).agentProcess?.status !== 'exited'; i++) await new Promise((r) => setTimeout(r, 500));
    expect((await c.get(v.id)).agentProcess).toMatchObject({ id: 'agent-1', status: 'exited' });

    const before = await deletePodOf(v.id);
    // the kubelet kills the old containers a moment after the API object went: until then they answer
    for (let i = 0; i < 60 && !(await c.get(v.id)).stages.some((s) => s.name === 'pod_replaced'); i++) {
      await execText(c, v.id, ['true']).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect((await execText(c, v.id, ['true'])).exitCode, 'commands run in the new Pod').toBe(0);
    const [after] = await podsOf(v.id);
    expect(after?.metadata?.uid).not.toBe(before.metadata?.uid);
    const view = await c.get(v.id);
    expect(view.stages.find((s) => s.name === 'pod_replaced'), 'the replacement is recorded').toMatchObject({ reason: 'PodDeleted' });
    expect(view.agentProcess, 'not re-run').toMatchObject({ id: 'agent-1', status: 'exited' });
    await c.remove(v.id);
    expect(await podsOf(v.id)).toEqual([]);
  });

  it('a stopped session is not watched: its Pod going with the stop heals nothing, while a ready one in the namespace heals', async () => {
    const c = h.controller;
    const [a, b] = await Promise.all([0, 1].map(() => launchReady(c, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV })));
    const troubleOfA: string[] = [];
    const off = c.subscribe((e) => (e.type === 'diagnostic' && /^Pod|^Container/.test(e.reason) ? troubleOfA.push(e.reason) : undefined), { sessionId: a!.id });
    expect((await c.stop(a!.id)).state).toBe('stopped');
    expect(await podsOf(a!.id), 'the stop deleted its Pod').toEqual([]);
    const restarted = new Promise<void>((resolve) => {
      const offB = c.subscribe((e) => (e.type === 'diagnostic' && e.reason === 'AgentRestarted' ? (offB(), resolve()) : undefined), { sessionId: b!.id });
    });
    await deletePodOf(b!.id);
    // the same namespace watch reported A's deletion before B's: had A still been watched, it would show by now
    await restarted;
    off();
    expect(troubleOfA).toEqual([]);
    expect((await c.get(a!.id)).state).toBe('stopped');
    expect(await podsOf(a!.id), 'no Pod re-created for the stopped session').toEqual([]);
    await Promise.all([c.remove(a!.id), c.remove(b!.id)]);
  });

  it('empty_dir: a deleted Pod fails the session with a clear error and is not re-created', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'scratch', env: FAST_AGENT_ENV });
    await waitForOutput(c, v.id, /ready for instructions/);
    const pod = await deletePodOf(v.id);
    // no command: the Pod watch notices the deletion, and the session fails by itself
    for (let i = 0; i < 120 && (await c.get(v.id)).state !== 'failed'; i++) await new Promise((r) => setTimeout(r, 500));
    const view = await c.get(v.id);
    expect(view.state).toBe('failed');
    // the heal may read the Pod while it still terminates (the watch reports the deletion as it begins)
    const gone = /\((PodDeleted: the session's Pod was deleted|PodDeleting: the session's Pod is being deleted)\)/.source;
    expect(view.error?.message).toMatch(
      new RegExp(`^the Pod ${h.ns.name}/${pod.metadata!.name!} is gone ${gone} and its workspace was an emptyDir: the work is lost; remove the session with berth rm ${v.id}$`),
    );
    expect(await podsOf(v.id), 'no Pod is created for it').toEqual([]);
    await expect(execText(c, v.id, ['true']), 'commands are refused').rejects.toThrow(/resume it first/);
    await expect(c.resume(v.id).then((r) => r.state)).resolves.toBe('failed');
    expect(await podsOf(v.id), 'a resume does not create one either').toEqual([]);
    await c.remove(v.id);
    expect(await labelledLeftovers(h.core, h.ns.name, `berth.dev/session-id=${v.id}`)).toEqual([]);
  });
});
