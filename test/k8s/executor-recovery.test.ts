// A Kubernetes session whose agentctl restarts (its container restarted) re-attaches on the next
// command: a fresh nonce is written into the Pod and traded (the first agentctl removed its nonce
// file), and recorded in place of the old one; the instance is re-created under the same id, and the
// agent that died with the old agentctl is reported lost — never re-run by itself. A Pod that is
// deleted is noticed by the Pod watch and replaced without a command (same name, same PVC), and its
// running agent started again as a new run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRepo, type TestRepo } from './support/git.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, waitForOutput, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { renderStatus } from '../../src/cli/output.js';
import { waitForDiagnostic } from './support/failures.js';
import { InventoryStore } from '../../src/inventory/index.js';

/** The nonce the controller recorded for a session (decrypted from the inventory). */
async function recordedNonce(dataDir: string, sessionId: string): Promise<string | undefined> {
  const store = InventoryStore.open({ dataDir });
  try {
    const ref = (await store.getRuntime(sessionId))?.secretRefs.AGENTCTL_BOOTSTRAP_NONCE;
    return ref === undefined ? undefined : await store.revealSecret(ref);
  } finally {
    await store.close();
  }
}

const env = clusterEnv();

describe('kubernetes executor: agentctl restarts in its Pod', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    repo = await createTestRepo('recovery', { 'README.md': '# recovery\n', BERTH_MARKER: 'marker-recovery\n' });
    h = await berthOnCluster({ prefix: 'recovery', profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } } });
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
  });

  it('re-attaches after a container restart with a fresh nonce; the agent is lost, resume starts it again', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    await waitForOutput(c, v.id, /ready for instructions/);
    const podOf = async () => (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items[0];
    const before = await podOf();
    const nonceBefore = await recordedNonce(h.dataDir, v.id);
    expect(nonceBefore).toMatch(/^[0-9a-f]{64}$/);
    // agentctl is the container's main process: SIGTERM ends it, the kubelet restarts the container
    await execText(c, v.id, ['sh', '-c', 'kill -TERM 1']).catch(() => undefined);
    for (let i = 0; i < 120; i++) {
      const p = await podOf();
      const s = p?.status?.containerStatuses?.[0];
      if ((s?.restartCount ?? 0) > 0 && s?.state?.running) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect((await podOf())?.status?.containerStatuses?.[0]?.restartCount, 'the container restarted').toBeGreaterThan(0);
    // status notices before any command (the Pod watch re-attaches by itself): the agent is shown lost, not running
    for (let i = 0; i < 60 && (await c.get(v.id)).agentProcess?.status !== 'lost'; i++) await new Promise((r) => setTimeout(r, 500));
    expect((await c.get(v.id)).agentProcess).toMatchObject({ id: 'agent-1', status: 'lost' });

    // the next command re-attaches (same Pod, a fresh nonce written into it and traded) and runs
    expect((await execText(c, v.id, ['cat', 'BERTH_MARKER'])).stdout).toBe('marker-recovery\n');
    const nonceAfter = await recordedNonce(h.dataDir, v.id);
    expect(nonceAfter, 'the nonce traded with the restarted agentctl is recorded').toMatch(/^[0-9a-f]{64}$/);
    expect(nonceAfter, 'never the first agentctl\'s nonce again').not.toBe(nonceBefore);
    expect((await podOf())?.metadata?.uid, 'the same Pod').toBe(before?.metadata?.uid);
    const view = await c.get(v.id);
    expect(view.state).toBe('ready');
    expect(view.agentProcess, 'the agent died with the old agentctl: lost, not re-run').toMatchObject({ id: 'agent-1', status: 'lost' });
    const out = await waitForOutput(c, v.id, /ready for instructions/);
    expect(out.match(/agent> starting/g), "the first run's output is still served (state on the PVC), once").toHaveLength(1);

    const resumed = await c.resume(v.id);
    expect(resumed.agentProcess).toMatchObject({ id: 'agent-2', status: 'running' });
    await c.remove(v.id);
    expect(await h.leftovers()).toEqual([]);
  });

  it('replaces a Pod deleted while the session is ready by itself: same name, same PVC, the work kept, the agent started again', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    await waitForOutput(c, v.id, /ready for instructions/);
    expect((await execText(c, v.id, ['sh', '-c', 'echo kept > work-file'])).exitCode).toBe(0);
    const podOf = async () => (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items[0];
    const before = await podOf();
    const reasons: string[] = [];
    const unsubscribe = c.subscribe((e) => (e.type === 'diagnostic' ? reasons.push(e.reason) : undefined), { sessionId: v.id });
    const restarted = waitForDiagnostic(c, v.id, 'AgentRestarted', 'after the Pod was deleted');
    await h.core.deleteNamespacedPod({ namespace: h.ns.name, name: before!.metadata!.name!, gracePeriodSeconds: 0 });
    // no command: the Pod watch notices the deletion and the session comes back by itself
    await restarted;

    expect((await execText(c, v.id, ['cat', 'work-file'])).stdout, 'the new Pod runs on the same PVC').toBe('kept\n');
    unsubscribe();
    const after = await podOf();
    expect(after?.metadata?.name).toBe(before?.metadata?.name);
    expect(after?.metadata?.uid).not.toBe(before?.metadata?.uid);
    expect(reasons, 'the session says why').toContain('PodDeleted');
    const view = await c.get(v.id);
    expect(view.agentProcess, 'the agent that ran when the Pod went is started again, as a new run').toMatchObject({ id: 'agent-2', status: 'running' });
    const replaced = view.stages.find((s) => s.name === 'pod_replaced');
    expect(replaced, 'status says why and when').toMatchObject({ status: 'succeeded', reason: 'PodDeleted' });
    expect(replaced?.message).toMatch(/^replaced at \d{4}-\d\d-\d\dT[\d:.]+Z: the session's Pod was deleted/);
    expect(renderStatus(view, 'table', new Date())).toMatch(/pod_replaced .*PodDeleted: replaced at /);
    let previous = '';
    for await (const chunk of c.logs(v.id, { previous: true })) previous += new TextDecoder().decode(chunk.data);
    expect(previous, 'the earlier run stays readable as the previous run').toMatch(/agent> starting/);
    await c.remove(v.id);
    expect(await h.leftovers()).toEqual([]);
  });
});
