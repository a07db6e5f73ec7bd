/**
 * The warm pool on the real cluster (`pool: {size: 2}` on a managed_pvc profile): members are
 * Pod + PVC pairs with agentctl started and healthy and nothing of a session; a launch claims one
 * (relabelled to the session, same Pod UID, the repository cloned into its volume, the agent
 * answering input), and stop, resume and rm work on it as on a cold session; the pool refills. A
 * burst larger than the pool gets the rest cold, each launch saying which. A member whose Pod died
 * is never handed out. Editing the profile replaces the members; size 0 removes them, leaving
 * nothing labelled by Berth.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionView } from '../../src/api/index.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, waitForOutput, writeClusterConfig, type BerthOnCluster, type BerthOnClusterOptions } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { waitFor } from './support/wait.js';

const env = clusterEnv();

interface MemberRow {
  id: string;
  state: string;
  profile_hash: string;
  metadata: string;
}

describe('warm pool on the cluster', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;
  let opts: BerthOnClusterOptions;

  beforeAll(async () => {
    repo = await createTestRepo('warm', { 'README.md': '# warm\n' });
    opts = {
      prefix: 'warm',
      profiles: { warm: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
      profileFields: { warm: { pool: { size: 2 } } },
    };
    h = await berthOnCluster(opts);
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
  });

  /** The pool's rows, read from the controller's SQLite inventory. */
  const rows = (): MemberRow[] => {
    const db = new Database(join(h.dataDir, 'state', 'berth.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare('SELECT id, state, profile_hash, metadata FROM pool_members ORDER BY created_at').all() as MemberRow[];
    } finally {
      db.close();
    }
  };
  const podUidOf = (row: MemberRow): string => (JSON.parse(row.metadata) as Record<string, string>).kubernetes_pod_uid ?? '';
  const readyMembers = (n: number): Promise<MemberRow[]> =>
    waitFor(`${n} ready pool members`, async () => {
      const ready = rows().filter((r) => r.state === 'ready');
      return ready.length === n && rows().length === n ? ready : undefined;
    }, { timeoutMs: 180_000, intervalMs: 250 });
  const podsOf = async (session: string) =>
    (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${session}` })).items.filter((p) => !p.metadata?.deletionTimestamp);
  const pvcsOf = async (session: string) => (await h.core.listNamespacedPersistentVolumeClaim({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${session}` })).items;
  const warm = (v: SessionView): boolean => v.stages.some((s) => s.name === 'pool_claim' && s.status === 'succeeded');

  it('a launch claims a ready member; stop, resume and rm work as on a cold session; the pool refills', async () => {
    const c = h.controller;
    const members = await readyMembers(2);
    const t0 = performance.now();
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'warm', env: FAST_AGENT_ENV, name: 'warm-one' });
    console.log(`[warm-pool] warm launch with a clone → ready: ${Math.round(performance.now() - t0)} ms`);
    expect(warm(v), JSON.stringify(v.stages)).toBe(true);
    const [pod] = await podsOf(v.id);
    expect(members.map(podUidOf), 'the session runs in a member Pod, relabelled to it').toContain(pod?.metadata?.uid);
    expect(pod?.metadata?.labels?.['berth.dev/instance-id']).not.toMatch(/^pool-/);
    expect(await pvcsOf(v.id)).toHaveLength(1);
    expect((await execText(c, v.id, ['cat', 'README.md'])).stdout).toBe('# warm\n');
    await waitForOutput(c, v.id, /ready for instructions/);
    await c.sendInput(v.id, 'hello pool\n');
    await waitForOutput(c, v.id, /you said: hello pool/);
    expect((await execText(c, v.id, ['sh', '-c', 'echo kept > .marker'])).exitCode).toBe(0);

    await c.stop(v.id);
    expect(await podsOf(v.id)).toEqual([]);
    expect(await pvcsOf(v.id), 'the volume is kept').toHaveLength(1);
    await c.resume(v.id);
    expect((await c.waitUntilSettled(v.id)).state).toBe('ready');
    expect((await execText(c, v.id, ['cat', '.marker'])).stdout).toBe('kept\n');
    await c.remove(v.id);
    expect(await podsOf(v.id)).toEqual([]);
    expect(await pvcsOf(v.id)).toEqual([]);
    const refilled = await readyMembers(2);
    expect(refilled.map((r) => r.id)).not.toContain(members[0]?.id);
  }, 400_000);

  it('a burst larger than the pool: two warm, the third cold; never one Pod for two sessions', async () => {
    const c = h.controller;
    await readyMembers(2);
    const launched = await Promise.all([1, 2, 3].map((i) => launchReady(c, { repository: { url: repo.url }, executor: 'warm', env: FAST_AGENT_ENV, name: `burst-${i}` })));
    expect(launched.filter(warm)).toHaveLength(2);
    // each says which way it went, and the cold one why (berth status and the dashboard show the stage)
    for (const v of launched.filter(warm)) expect(v.stages.find((s) => s.name === 'pool')).toMatchObject({ status: 'succeeded', reason: 'Warm' });
    expect(launched.find((v) => !warm(v))?.stages.find((s) => s.name === 'pool')).toMatchObject({ status: 'succeeded', reason: 'Cold', message: expect.stringMatching(/^the pool is empty/) });
    const uids = await Promise.all(launched.map(async (v) => (await podsOf(v.id)).map((p) => p.metadata?.uid)));
    expect(new Set(uids.flat()).size).toBe(3);
    for (const v of launched) expect((await execText(c, v.id, ['cat', 'README.md'])).stdout).toBe('# warm\n');
    await Promise.all(launched.map((v) => c.remove(v.id)));
  }, 400_000);

  it('a member whose Pod died is not handed out, and is replaced', async () => {
    const c = h.controller;
    const [dead, alive] = await readyMembers(2);
    const deadPod = (JSON.parse(dead!.metadata) as Record<string, string>).kubernetes_pod_name ?? '';
    await h.core.deleteNamespacedPod({ namespace: h.ns.name, name: deadPod, gracePeriodSeconds: 0 });
    const v = await launchReady(c, { executor: 'warm', env: FAST_AGENT_ENV, name: 'after-death' });
    const [pod] = await podsOf(v.id);
    expect(pod?.metadata?.uid).not.toBe(podUidOf(dead!));
    if (warm(v)) expect(pod?.metadata?.uid).toBe(podUidOf(alive!));
    await c.remove(v.id);
    const now = await readyMembers(2);
    expect(now.map((r) => r.id)).not.toContain(dead!.id);
  }, 400_000);

  it('the pools API lists the members; removing the pool deletes the ready ones and it refills', async () => {
    const c = h.controller;
    const before = await readyMembers(2);
    const [pool, ...others] = await c.pools();
    expect(others).toEqual([]);
    expect(pool).toMatchObject({ profile: 'warm', executor: 'cluster', size: 2, ready: 2, creating: 0, repository: null });
    expect(pool!.members.map((m) => m.id).sort()).toEqual(before.map((r) => r.id).sort());
    for (const m of pool!.members) expect(m.pod).toMatch(new RegExp(`^${h.ns.name}/berth-[0-9a-f]{16}$`));
    expect(await c.removePool('warm')).toEqual({ profile: 'warm', removed: 2 });
    const after = await readyMembers(2);
    expect(after.map((r) => r.id).filter((id) => before.some((b) => b.id === id)), 'all new members').toEqual([]);
    for (const old of before) expect(await podsOf(old.id), 'the removed members are gone').toEqual([]);
    await expect(c.removePool('nope')).rejects.toThrow(/profile 'nope' has no warm pool \(pooled: warm\)/);
  }, 400_000);

  it('an edited profile replaces the members; size 0 removes them and leaves nothing labelled', async () => {
    const before = await readyMembers(2);
    const edited: BerthOnClusterOptions = {
      ...opts,
      profiles: { warm: { pod_template: imageTemplate(env.agentImage, { env: [{ name: 'POOL_EDIT', value: '1' }] }), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
    };
    writeClusterConfig(h.dataDir, h.sa, edited);
    const c = await h.restart();
    const after = await waitFor('members of the edited profile only', async () => {
      const all = rows();
      const ready = all.filter((r) => r.state === 'ready');
      return ready.length === 2 && all.length === 2 && ready.every((r) => r.profile_hash !== before[0]!.profile_hash) ? ready : undefined;
    }, { timeoutMs: 180_000, intervalMs: 250 });
    expect(after.map((r) => r.id)).not.toContain(before[0]!.id);
    const v = await launchReady(c, { executor: 'warm', env: FAST_AGENT_ENV, name: 'edited' });
    expect(warm(v)).toBe(true);
    expect((await execText(c, v.id, ['sh', '-c', 'echo $POOL_EDIT'])).stdout).toBe('1\n');
    await c.remove(v.id);

    writeClusterConfig(h.dataDir, h.sa, { ...edited, profileFields: { warm: { pool: { size: 0 } } } });
    await h.restart();
    await waitFor('no pool member left', async () => (rows().length === 0 ? true : undefined), { timeoutMs: 120_000, intervalMs: 250 });
    expect(await h.leftovers()).toEqual([]);
  }, 600_000);
});
