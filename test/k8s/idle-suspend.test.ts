/**
 * Idle suspension on the real cluster (`idle: {suspend_after: 3s}` on the executor, shortened for the
 * test): a quiet session is suspended, its Pod deleted and its PVC kept; a session launched before it
 * whose agent keeps a child process at work (a long tool call) is not. Reads leave the suspended
 * session asleep; `send` wakes it (a new Pod on the same volume) and the text reaches the agent; the
 * work on the volume survived. Nothing is left after rm.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, waitForOutput, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { waitFor } from './support/wait.js';

const env = clusterEnv();

describe('idle suspension on the cluster', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    repo = await createTestRepo('idle', { 'README.md': '# idle\n' });
    h = await berthOnCluster({
      prefix: 'idle',
      executor: { idle: { suspend_after: '3s' } },
      profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
      agents: {
        toolcall: { command: ['sh', '-c', 'echo working; sleep 600'] },
        chatty: { command: ['sh', '-c', 'while :; do echo tick; sleep 0.3; done'] },
      },
    });
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
  });

  const objectsOf = async (id: string) => {
    const selector = `berth.dev/session-id=${id}`;
    const pods = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: selector })).items.filter((p) => !p.metadata?.deletionTimestamp);
    const pvcs = (await h.core.listNamespacedPersistentVolumeClaim({ namespace: h.ns.name, labelSelector: selector })).items;
    return { pods: pods.map((p) => p.metadata!.uid!), pvcs: pvcs.map((p) => p.metadata!.uid!) };
  };

  it('suspends a quiet session (Pod deleted, PVC kept) but not a busy one; send wakes it on the same volume', async () => {
    const c = h.controller;
    const busy = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', agent: 'toolcall', name: 'tool-call' });
    await waitForOutput(c, busy.id, /working/);
    const chatty = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', agent: 'chatty', name: 'chatty' });
    await waitForOutput(c, chatty.id, /tick/);
    const asking = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', agent: 'demo-acp', env: FAST_AGENT_ENV, prompt: 'write NOTES.md', name: 'asking' });
    await waitFor('the permission request pending', async () => ((await c.get(asking.id)).agentProcess?.pendingApprovals === 1 ? true : undefined), { timeoutMs: 60_000, intervalMs: 250 });
    const shelled = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV, name: 'shelled' });
    const shell = await c.openShell(shelled.id, { rows: 24, cols: 80 });
    const screen = (async () => {
      for await (const chunk of shell.output) void chunk; // drained, or the shell cannot end
    })();
    const quiet = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV, name: 'quiet' });
    await waitForOutput(c, quiet.id, /ready for instructions/);
    expect((await execText(c, quiet.id, ['sh', '-c', 'echo kept > .idle-marker'])).exitCode).toBe(0);
    const before = await objectsOf(quiet.id);

    const suspended = await waitFor(
      'the quiet session suspended',
      async () => {
        const v = await c.get(quiet.id);
        return v.state === 'suspended' ? v : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    expect(suspended.stages.find((s) => s.name === 'suspended')?.message).toMatch(/^suspended at .*: idle since .* \(3s without /);
    const asleep = await objectsOf(quiet.id);
    expect(asleep.pods, 'its Pod is deleted').toEqual([]);
    expect(asleep.pvcs, 'its volume is kept').toEqual(before.pvcs);
    expect((await c.get(busy.id)).state, 'launched earlier, its agent has a child process at work: not idle').toBe('ready');
    expect((await c.get(chatty.id)).state, 'an agent that keeps printing (no input) is not idle').toBe('ready');
    expect((await c.get(asking.id)).state, 'an agent waiting for an approval is not idle').toBe('ready');
    expect((await c.get(shelled.id)).state, 'a session with an open shell is not idle').toBe('ready');
    shell.write('exit\n');
    await shell.exit;
    await screen;

    // reads leave it asleep
    await c.list();
    let asleepLogs = '';
    for await (const chunk of c.logs(quiet.id, {})) asleepLogs += new TextDecoder().decode(chunk.data);
    expect(asleepLogs, 'answered from the output mirrored at suspension').toMatch(/ready for instructions/);
    expect((await c.get(quiet.id)).state).toBe('suspended');
    expect((await objectsOf(quiet.id)).pods).toEqual([]);

    // send wakes it, on the same volume, and the text reaches the agent
    const t0 = performance.now();
    await c.sendInput(quiet.id, 'wake up\n');
    console.log(`[idle-suspend] send to a suspended session → woken (a new Pod on the kept volume) and the input written: ${Math.round(performance.now() - t0)} ms`);
    expect((await c.get(quiet.id)).state).toBe('ready');
    // read at once: the input just written keeps it awake for a window (it may sleep again after)
    const awake = await objectsOf(quiet.id);
    expect(awake.pods).toHaveLength(1);
    expect(awake.pods[0]).not.toBe(before.pods[0]);
    expect(awake.pvcs).toEqual(before.pvcs);
    await waitForOutput(c, quiet.id, /you said: wake up/);
    // an exec wakes it too, should it have gone back to sleep meanwhile
    expect((await execText(c, quiet.id, ['cat', '.idle-marker'])).stdout).toBe('kept\n');

    await c.remove(quiet.id);
    await c.remove(busy.id);
    await Promise.all([chatty, asking, shelled].map((v) => c.remove(v.id)));
    expect(await h.leftovers()).toEqual([]);
  }, 400_000);
});
