/**
 * `berth logs` of a suspended or stopped Kubernetes session, on the real cluster: the output lives
 * on the session's volume and agentctl (which serves it) runs only while the Pod runs, so the
 * controller mirrors it to its store when the session is suspended or stopped. Logs are read from
 * that copy without waking the session (no Pod); after a resume and a stop the new run's output is
 * there, the run before it under `previous`; rm deletes the copy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../src/controller/index.js';
import { InventoryStore } from '../../src/inventory/index.js';
import { berthOnCluster, FAST_AGENT_ENV, imageTemplate, launchReady, waitForOutput, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { waitFor } from './support/wait.js';

const env = clusterEnv();

/** The whole recorded output of a session (no follow), as text. */
async function logsText(c: Controller, id: string, opts: { previous?: boolean; follow?: boolean } = {}): Promise<string> {
  const dec = new TextDecoder();
  let text = '';
  for await (const chunk of c.logs(id, opts)) text += dec.decode(chunk.data, { stream: true });
  return text + dec.decode();
}

describe('logs of a suspended or stopped session on the cluster', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    repo = await createTestRepo('stopped-logs', { 'README.md': '# stopped logs\n' });
    h = await berthOnCluster({
      prefix: 'slogs',
      executor: { idle: { suspend_after: '3s' } },
      profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
    });
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
  });

  const podsOf = async (id: string) =>
    (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${id}` })).items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata!.name!);

  it('reads a suspended session’s output without waking it, a stopped one’s after a resume, and forgets it on rm', async () => {
    const c = h.controller;
    const s = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV, name: 'quiet' });
    await waitForOutput(c, s.id, /ready for instructions/);
    await c.sendInput(s.id, 'hello\n');
    await waitForOutput(c, s.id, /you said: hello/);

    await waitFor(
      'the quiet session suspended',
      async () => ((await c.get(s.id)).state === 'suspended' ? true : undefined),
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    expect(await podsOf(s.id), 'suspended: its Pod is deleted').toEqual([]);
    const asleep = await logsText(c, s.id);
    expect(asleep).toMatch(/ready for instructions[\s\S]*you said: hello/);
    expect(await logsText(c, s.id, { follow: true }), 'a follow ends after the recorded output').toBe(asleep);
    await expect(logsText(c, s.id, { previous: true })).rejects.toThrow(/no previous agent run/);
    expect((await c.get(s.id)).state, 'reading the logs did not wake it').toBe('suspended');
    expect(await podsOf(s.id)).toEqual([]);

    // resume: a new agent run on the same volume; more input; stop
    expect((await c.resume(s.id)).state).toBe('ready');
    await waitForOutput(c, s.id, /ready for instructions/);
    await c.sendInput(s.id, 'again\n');
    await waitForOutput(c, s.id, /you said: again/);
    expect((await c.stop(s.id)).state).toBe('stopped');
    expect(await podsOf(s.id)).toEqual([]);
    const stopped = await logsText(c, s.id);
    expect(stopped).toMatch(/you said: again/);
    expect(stopped, 'the current run only').not.toMatch(/you said: hello/);
    expect(await logsText(c, s.id, { previous: true }), 'the run before').toMatch(/you said: hello/);
    expect((await c.get(s.id)).state).toBe('stopped');

    const store = InventoryStore.open({ dataDir: h.dataDir });
    try {
      expect(await store.readRecordedOutput(s.id, 'agent-2'), 'mirrored while the session exists').not.toBeNull();
      await c.remove(s.id);
      expect(await store.readRecordedOutput(s.id, 'agent-1')).toBeNull();
      expect(await store.readRecordedOutput(s.id, 'agent-2')).toBeNull();
    } finally {
      await store.close();
    }
    expect(await h.leftovers()).toEqual([]);
  }, 400_000);
});
