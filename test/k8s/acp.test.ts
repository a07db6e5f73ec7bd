// ACP sessions on the real cluster: the built-in demo-acp agent speaks the Agent Client Protocol
// with agentctl in the Pod; its permission request waits for an answer, and its conversation (kept
// in the agent's state directory on the PVC) survives a Pod replacement and a stop/resume: the new
// agent run loads it (session/load) instead of re-running the launch prompt.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/api/index.js';
import type { Controller } from '../../src/controller/index.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, labelledLeftovers, launchReady, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { waitForDiagnostic } from './support/failures.js';

const env = clusterEnv();

async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function events(c: Controller, id: string): Promise<AgentEvent['event'][]> {
  const out: AgentEvent['event'][] = [];
  let from = 0;
  for (;;) {
    const page = await c.agentEvents(id, { from });
    out.push(...page.events.map((e) => e.event));
    if (page.events.length === 0 || page.next <= from) return out;
    from = page.next;
  }
}
const messages = (evs: AgentEvent['event'][]): string =>
  evs
    .map((e) => (e.type === 'update' && e.replay !== true && e.update['sessionUpdate'] === 'agent_message_chunk' ? ((e.update['content'] as { text?: string }).text ?? '') : ''))
    .join('');

describe('kubernetes executor: ACP sessions', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    repo = await createTestRepo('acp', { 'README.md': '# acp\n' });
    h = await berthOnCluster({
      prefix: 'acp',
      profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
    });
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
  });

  it('holds the edit for approval, then continues the conversation after a Pod replacement and after stop/resume', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', agent: 'demo-acp', prompt: 'please write NOTES.md', env: FAST_AGENT_ENV });
    await until('a pending approval', async () => ((await c.get(v.id)).agentProcess?.pendingApprovals === 1 ? true : undefined));
    expect((await execText(c, v.id, ['test', '-e', 'NOTES.md'])).exitCode, 'nothing written before the answer').not.toBe(0);
    expect(await c.approve(v.id, {})).toMatchObject({ decision: 'allow', title: 'Write NOTES.md' });
    await until('turn 1 to end', async () => ((await events(c, v.id)).some((e) => e.type === 'turn_end') ? true : undefined));
    expect((await execText(c, v.id, ['grep', '-c', 'Written by', 'NOTES.md'])).stdout.trim()).toBe('1');

    // the kubelet's record of an eviction: the Pod is replaced, the agent started again in the new one
    const [before] = await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` }).then((l) => l.items);
    const restarted = waitForDiagnostic(c, v.id, 'AgentRestarted', 'after the eviction');
    await h.core.patchNamespacedPodStatus(
      { namespace: h.ns.name, name: before!.metadata!.name!, body: { status: { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await restarted;
    expect((await c.get(v.id)).agentProcess).toMatchObject({ id: 'agent-2', status: 'running' });
    const replaced = await until('the new run to open its session', async () => (await events(c, v.id)).find((e) => e.type === 'session'));
    expect(replaced).toMatchObject({ resume: { from: 'agent-1', loaded: true, reason: null } });
    expect((await events(c, v.id)).some((e) => e.type === 'prompt'), 'the launch prompt is not run again').toBe(false);

    await c.sendInput(v.id, 'what next?\n');
    await until('the second turn', async () => ((await events(c, v.id)).some((e) => e.type === 'turn_end') ? true : undefined));
    expect(messages(await events(c, v.id))).toContain('This conversation had 1 earlier turn(s); the first was: please write NOTES.md');

    await c.stop(v.id);
    await c.resume(v.id);
    await until('the resumed run', async () => ((await c.get(v.id)).agentProcess?.id === 'agent-3' ? true : undefined));
    const resumed = await until('the resumed run to open its session', async () => (await events(c, v.id)).find((e) => e.type === 'session'));
    expect(resumed).toMatchObject({ session_id: replaced?.type === 'session' ? replaced.session_id : '', resume: { from: 'agent-2', loaded: true } });
    await c.sendInput(v.id, 'and now?\n');
    await until('the third turn', async () => ((await events(c, v.id)).some((e) => e.type === 'turn_end') ? true : undefined));
    expect(messages(await events(c, v.id))).toContain('This conversation had 2 earlier turn(s)');
    expect((await execText(c, v.id, ['grep', '-c', 'Written by', 'NOTES.md'])).stdout.trim(), 'written once').toBe('1');

    await c.remove(v.id);
    expect(await labelledLeftovers(h.core, h.ns.name, `berth.dev/session-id=${v.id}`)).toEqual([]);
  });
});
