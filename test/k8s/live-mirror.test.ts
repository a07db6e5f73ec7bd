/**
 * The live output mirror on the real cluster: while a Kubernetes session runs, its agent's output
 * is copied to the controller's store as it streams, so a Pod that goes without a stop (here
 * force-deleted with kubectl, grace 0, on an emptyDir workspace: the output file goes with it and
 * no stop-time copy can be made) still leaves `berth logs` its output of a few seconds before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../src/controller/index.js';
import { InventoryStore } from '../../src/inventory/index.js';
import { berthOnCluster, FAST_AGENT_ENV, imageTemplate, launchReady, waitForOutput, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { kubectlOk } from './support/helm.js';
import { waitFor } from './support/wait.js';

const env = clusterEnv();

/** The whole recorded output of a session (no follow), as text. */
async function logsText(c: Controller, id: string, opts: { previous?: boolean } = {}): Promise<string> {
  const dec = new TextDecoder();
  let text = '';
  for await (const chunk of c.logs(id, opts)) text += dec.decode(chunk.data, { stream: true });
  return text + dec.decode();
}

describe('the agent output mirrored as it streams, on the cluster', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    repo = await createTestRepo('live-mirror', { 'README.md': '# live mirror\n' });
    h = await berthOnCluster({
      prefix: 'lmirror',
      profiles: { scratch: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'empty_dir' } } },
    });
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
  });

  const podsOf = async (id: string) =>
    (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${id}` })).items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata!.name!);

  it('a Pod force-deleted under a running session leaves the output it printed readable through logs', async () => {
    const c = h.controller;
    const s = await launchReady(c, { repository: { url: repo.url }, executor: 'scratch', env: FAST_AGENT_ENV, name: 'chatty' });
    await waitForOutput(c, s.id, /ready for instructions/);
    await c.sendInput(s.id, 'hello mirror\n');
    await waitForOutput(c, s.id, /you said: hello mirror/);

    // no stop, no command: the controller's follower writes the new output within a few seconds
    const store = InventoryStore.open({ dataDir: h.dataDir });
    try {
      await waitFor(
        'the output mirrored while the session runs',
        async () => {
          const chunks = await store.readRecordedOutput(s.id, 'agent-1');
          const text = Buffer.concat((chunks ?? []).map((ch) => ch.data)).toString();
          return /ready for instructions[\s\S]*you said: hello mirror/.test(text) ? text : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
    } finally {
      await store.close();
    }
    expect((await c.get(s.id)).state, 'mirrored while ready').toBe('ready');

    const [pod] = await podsOf(s.id);
    expect(pod).toBeDefined();
    await kubectlOk(['-n', h.ns.name, 'delete', 'pod', pod!, '--grace-period=0', '--force', '--wait=false']);
    // its workspace was an emptyDir: the session fails by itself (no stop, no copy from the gone Pod)
    const failed = await waitFor('the session failed with its Pod', async () => ((await c.get(s.id)).state === 'failed' ? c.get(s.id) : undefined), { timeoutMs: 120_000, intervalMs: 250 });
    expect(failed.error?.message).toMatch(/is gone .*emptyDir/);
    expect(await podsOf(s.id), 'no Pod re-created').toEqual([]);

    const text = await logsText(c, s.id);
    expect(text, 'what the agent printed before its Pod went').toMatch(/ready for instructions[\s\S]*you said: hello mirror/);
    expect((await c.get(s.id)).state, 'reading the logs changed nothing').toBe('failed');
    expect(await podsOf(s.id)).toEqual([]);

    await c.remove(s.id);
    await expect(logsText(c, s.id)).rejects.toThrow();
    expect(await h.leftovers()).toEqual([]);
  }, 300_000);
});
