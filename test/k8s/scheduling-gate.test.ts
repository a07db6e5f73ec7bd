// The scheduling gate of a Pod on a new managed claim, on the real cluster: a launch creates its Pod
// behind the gate while the claim binds and lifts it once the claim is Bound (the Pod carries no
// gate afterwards); a controller killed while its Pod is still gated leaves a row its recovery
// rolls back: the gated Pod and the claim are deleted by UID, nothing is left by label.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findInstallRoot, loadConfig } from '../../src/config/index.js';
import { createController } from '../../src/controller/index.js';
import { SCHEDULING_GATE } from '../../src/executors/kubernetes/constants.js';
import { InventoryStore } from '../../src/inventory/index.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, labelledLeftovers, launchReady, ROOT, writeClusterConfig, type BerthOnCluster } from './support/berth.js';
import { crashChild } from './support/crash-child.js';
import { clusterEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';

const env = clusterEnv();
/** A class whose provisioner nobody runs: its claims stay Pending, so a Pod created for one stays gated for the whole grace. */
const STUCK_CLASS = `berth-test-stuck-${randomBytes(3).toString('hex')}`;
const CRASH_TIMEOUT_MS = 300_000;

describe('kubernetes executor: the scheduling gate of a Pod on a new managed claim', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;
  let storage: StorageV1Api;
  const dataDirs: string[] = [];

  beforeAll(async () => {
    repo = await createTestRepo('gate', { 'README.md': '# gate\n' });
    h = await berthOnCluster({
      prefix: 'gate',
      profiles: { managed: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
    });
    storage = h.admin.makeApiClient(StorageV1Api);
    await storage.createStorageClass({ body: { metadata: { name: STUCK_CLASS }, provisioner: 'example.com/berth-test-none', reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' } });
  });

  afterAll(async () => {
    const left = h ? await h.leftovers() : [];
    await h?.close();
    await storage?.deleteStorageClass({ name: STUCK_CLASS }).catch(() => undefined);
    await repo?.remove();
    for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
    expect(left, 'no Berth-labelled Pod or PVC is left in the namespace').toEqual([]);
  });

  const waitsOf = (v: { stages: { name: string; waits?: { reason: string | null }[] }[] }, stage: string): (string | null)[] =>
    (v.stages.find((s) => s.name === stage)?.waits ?? []).map((w) => w.reason);

  it('a launch creates its Pod behind the gate while the claim binds, lifts it once Bound, and the Pod carries no gate afterwards', async () => {
    const v = await launchReady(h.controller, { repository: { url: repo.url }, executor: 'managed', env: FAST_AGENT_ENV });
    expect(waitsOf(v as never, 'storage')).toEqual(['ClaimBound']);
    expect(waitsOf(v as never, 'pod_ready')).toContain('SchedulingGateLifted');
    const [pod] = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items;
    expect(pod?.spec?.schedulingGates ?? []).toEqual([]);
    expect(pod?.spec?.nodeName).toBeTruthy();
    expect((await execText(h.controller, v.id, ['cat', 'README.md'])).stdout).toBe('# gate\n');
    await h.controller.remove(v.id);
    expect(await labelledLeftovers(h.core, h.ns.name, `berth.dev/session-id=${v.id}`)).toEqual([]);
  });

  it.each([
    ['before:pod_created', 'pod_creating'],
    ['pod_admitted', 'pod_admitted'],
  ])(
    'a controller killed at %s while its Pod is gated: recovery deletes the gated Pod and the claim (row %s rolled back)',
    async (point, rowState) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'berth-k8s-gate-'));
      dataDirs.push(dataDir);
      writeClusterConfig(dataDir, h.sa, { prefix: 'gate', profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi', storage_class: STUCK_CLASS } } } });
      const child = await crashChild({ CHILD_DATA_DIR: dataDir, CHILD_REPO_URL: repo.url }, point);
      expect(child.status, `the child must die at ${point} (stdout: ${child.stdout.slice(-300)} stderr: ${child.stderr.slice(-800)})`).toBe(137);

      const store = InventoryStore.open({ dataDir });
      const [session] = await store.listSessions();
      const row = session ? await store.getRuntime(session.id) : null;
      await store.close();
      expect(row?.state).toBe(rowState);
      const id = session?.id ?? '';
      const selector = `berth.dev/session-id=${id}`;
      const pods = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: selector })).items;
      expect(pods, 'the killed launch left its Pod').toHaveLength(1);
      expect(pods[0]?.spec?.schedulingGates, 'still behind the gate: its claim never bound').toEqual([{ name: SCHEDULING_GATE }]);
      expect(pods[0]?.spec?.nodeName).toBeUndefined();

      const c = await createController({ dataDir, config: loadConfig({ dataDir, installRoot: findInstallRoot(join(ROOT, 'src', 'config')) }), env: {} });
      try {
        await c.recover();
        const view = await c.get(id);
        expect(view.state).toBe('failed');
        expect(view.error?.message).toMatch(/^launch was interrupted by a controller restart/);
        expect(await labelledLeftovers(h.core, h.ns.name, selector), 'the gated Pod and the claim are gone').toEqual([]);
        await c.remove(id);
      } finally {
        await c.close();
      }
    },
    CRASH_TIMEOUT_MS,
  );
});
