import { afterEach, describe, expect, it } from 'vitest';
import type { ExecutorInstance } from '../../executor.js';
import { CHECKPOINT, LABEL, META } from '../constants.js';
import { FakePoolStore } from '../testing/fake-pool-store.js';
import { KubeHarness, NAMESPACE } from '../testing/harness.js';

const DAY = 86_400_000;
const stops: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

/** Starts the executor's pool of the harness profile with `size` members; resolves once `ready` are ready. */
async function pooled(size: number, ready = size): Promise<{ h: KubeHarness; store: FakePoolStore }> {
  const said: string[] = [];
  const log = (level: string) => (obj: object, msg?: string) => said.push(`${level} ${msg ?? ''} ${JSON.stringify(obj)}`);
  const h = new KubeHarness({ logger: { debug: () => undefined, info: log('info'), warn: log('warn'), error: log('error') } });
  const store = new FakePoolStore();
  stops.push(h.executor.startPools([{ snapshot: h.snapshot(), size, maxAgeMs: DAY, repository: null }], store));
  await until(async () => (await store.listPoolMembers()).filter((r) => r.state === 'ready').length >= ready, `${ready} ready members (log: ${said.join('\n')})`).catch((err: Error) => {
    throw new Error(`${err.message}\n${said.join("\n")}\nrows: ${JSON.stringify([...store.rows.values()].map((r) => [r.state, r.metadata.kubernetes_state]))}\nexecs: ${h.exec.calls.map((c) => c.kind).join(",")} forwards: ${h.agentctl.forwards.length}`);
  });
  return { h, store };
}

async function until(check: () => Promise<boolean>, what = 'the condition'): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const podsOf = async (h: KubeHarness, session: string): Promise<string[]> =>
  (await h.objects.listPods(NAMESPACE, `${LABEL.sessionId}=${session}`)).items.map((p) => p.metadata?.name ?? '');

describe('warm pool (fakes)', () => {
  it('makes members with agentctl healthy but no handshake, no repository and no session', async () => {
    const { h, store } = await pooled(2);
    const rows = await store.listPoolMembers();
    expect(rows.map((r) => r.state)).toEqual(['ready', 'ready']);
    expect(h.agentctl.handshakes, 'no nonce is traded until a claim').toEqual([]);
    for (const row of rows) {
      expect(await podsOf(h, row.id)).toHaveLength(1);
      expect(row.metadata[META.podUid]).toBeDefined();
      expect(store.secrets.get(row.secretRefs.bootstrap_nonce ?? '')).toMatch(/^[A-Za-z0-9_-]{16,}$/);
    }
    // the bootstrap carried no clone
    expect(h.exec.calls.filter((c) => c.kind === 'bootstrap').every((c) => !c.command.join(' ').includes('git.example'))).toBe(true);
  });

  it('a launch claims the oldest member: relabelled to the session, nonce traded, repository prepared; the pool refills', async () => {
    const { h, store } = await pooled(1);
    const [member] = await store.listPoolMembers();
    const nonce = store.secrets.get(member!.secretRefs.bootstrap_nonce!);
    let instance: ExecutorInstance | null = null;
    const diagnostics: string[] = [];
    const req = h.request();
    instance = await h.executor.createInstance({ ...req, onDiagnostic: (reason, message) => diagnostics.push(`${reason}: ${message}`) });
    expect(diagnostics).toEqual([expect.stringMatching(/^WarmLaunch: warm launch/)]);
    expect(h.stageTrail).toEqual(['pool_claim:running', 'pool_claim:succeeded', 'agentctl_connect:running', 'bootstrap:running', expect.any(String), expect.any(String), 'pool:running', 'pool:succeeded']);
    expect(h.recorded.stages.at(-1), 'the session keeps which way it went').toMatchObject({ stage: 'pool', status: 'succeeded', reason: 'Warm', message: expect.stringMatching(/^a ready Pod of profile k8s's pool was claimed \(berth-[0-9a-f]{16}\)$/) });
    expect(h.states).toEqual([CHECKPOINT.poolClaimed, 'agentctl_connected']);
    expect(instance.metadata[META.podName]).toBe(member!.metadata[META.podName]);
    expect(instance.metadata[META.podUid]).toBe(member!.metadata[META.podUid]);
    expect(instance.secrets.bootstrapNonce).toBe(nonce);
    expect(h.agentctl.handshakes).toEqual([{ podUid: member!.metadata[META.podUid], nonce, accepted: true }]);
    const pod = h.objects.find('Pod', NAMESPACE, member!.metadata[META.podName]!);
    const pvc = h.objects.find('PVC', NAMESPACE, member!.metadata[META.pvcName]!);
    for (const o of [pod, pvc]) {
      expect(o?.metadata?.labels?.[LABEL.sessionId]).toBe('ses-1');
      expect(o?.metadata?.labels?.[LABEL.instanceId]).toBe('inst-1');
    }
    expect(h.exec.calls.some((c) => c.command.join(' ').includes('claim-prepare.sh'))).toBe(true);
    expect(await store.getPoolMember(member!.id), 'the claimed row is gone').toBeNull();
    expect(store.secrets.has(member!.secretRefs.bootstrap_nonce!), "the member's nonce went with its row (the session records its own)").toBe(false);
    await until(async () => (await store.listPoolMembers()).some((r) => r.state === 'ready'), 'the refill');
    await instance.close();
  });

  it('goes cold, saying why, when the pool is empty, and when a member Pod died', async () => {
    const { h, store } = await pooled(1);
    const [member] = await store.listPoolMembers();
    await h.objects.deletePod(NAMESPACE, member!.metadata[META.podName]!, { uid: member!.metadata[META.podUid]! });
    const diagnostics: string[] = [];
    const instance = await h.executor.createInstance({ ...h.request(), onDiagnostic: (reason, message) => diagnostics.push(`${reason}: ${message}`) });
    expect(diagnostics).toEqual([expect.stringMatching(/^ColdLaunch: cold launch: pool member pool-\w+ failed its check \(pool_claim: its Pod .* is gone\)/)]);
    expect(h.recorded.stages.find((e) => e.stage === 'pool' && e.status === 'succeeded'), 'recorded with the session too').toMatchObject({ reason: 'Cold', message: expect.stringMatching(/^pool member pool-\w+ failed its check/) });
    expect(instance.metadata[META.podName]).not.toBe(member!.metadata[META.podName]);
    expect(await store.getPoolMember(member!.id), 'the dead member is removed').toBeNull();
    await instance.close();
  });

  it('never hands a member of an earlier profile version to a launch of the current one', async () => {
    const { h, store } = await pooled(1);
    const [member] = await store.listPoolMembers();
    store.rows.get(member!.id)!.profileHash = 'older';
    const diagnostics: string[] = [];
    const instance = await h.executor.createInstance({ ...h.request(), onDiagnostic: (reason, message) => diagnostics.push(`${reason}: ${message}`) });
    expect(diagnostics).toEqual([expect.stringMatching(/ColdLaunch: cold launch: the pool holds members of an earlier version of the profile \(or of Berth\) only/)]);
    expect(instance.metadata[META.podName]).not.toBe(member!.metadata[META.podName]);
    await instance.close();
  });

  it("a repository that cannot be prepared fails the warm launch and deletes the claimed member's objects, as a cold launch rolls back", async () => {
    const { h, store } = await pooled(1);
    const [member] = await store.listPoolMembers();
    h.exec.handle = (call) => (call.command.join(' ').includes('claim-prepare.sh') ? { exitCode: 75, stderr: 'fatal: repository not found' } : undefined);
    const err = await h.executor.createInstance(h.request()).then(
      () => null,
      (e: unknown) => e as Error & { reason?: string },
    );
    expect(err?.reason).toBe('PrepareFailed');
    expect(h.objects.find('Pod', NAMESPACE, member!.metadata[META.podName]!), 'the claimed Pod is deleted').toBeUndefined();
    expect(h.objects.find('PVC', NAMESPACE, member!.metadata[META.pvcName]!), 'and its PVC').toBeUndefined();
    expect(h.recorded.releases, 'the provisional row is released').toBe(1);
  });

  it('a claim relabels the member as the pool last listed it, without reading it; after a change since, it reads it and still claims it', async () => {
    for (const changed of [false, true]) {
      const { h, store } = await pooled(1);
      const [member] = await store.listPoolMembers();
      const podName = member!.metadata[META.podName]!;
      await until(() => Promise.resolve(h.objects.calls.some((c) => c.op === 'listPvcs')), 'a pass that listed the member');
      await new Promise((r) => setImmediate(r)); // the pass has its listing
      if (changed) h.objects.update('Pod', NAMESPACE, podName, (pod) => (pod.metadata = { ...pod.metadata, annotations: { touched: 'yes' } }));
      const from = h.objects.calls.length;
      const said: string[] = [];
      const instance = await h.executor.createInstance({ ...h.request(), onDiagnostic: (reason) => said.push(reason) });
      expect(said).toEqual(['WarmLaunch']);
      expect(instance.metadata[META.podName]).toBe(podName);
      const reads = h.objects.calls.slice(from).filter((c) => c.op === 'getPod' && c.name === podName);
      expect(reads.length, changed ? 'changed since the list: read again' : 'as listed: no read').toBe(changed ? 1 : 0);
      expect(h.objects.find('Pod', NAMESPACE, podName)?.metadata?.labels?.[LABEL.sessionId]).toBe('ses-1');
      await instance.close();
      await Promise.all(stops.splice(0).map((s) => s()));
    }
  });

  it('two launches racing for one member: one warm, one cold; never the same Pod', async () => {
    const { h } = await pooled(1);
    const said: string[] = [];
    const a = { ...h.request(), onDiagnostic: (reason: string) => said.push(reason) };
    const b = { ...h.request(), identity: { instanceId: 'inst-2', sessionId: 'ses-2', taskId: 'ses-2', environmentId: 'ses-2' }, onDiagnostic: (reason: string) => said.push(reason) };
    const [x, y] = await Promise.all([h.executor.createInstance(a), h.executor.createInstance(b)]);
    expect(said.sort()).toEqual(['ColdLaunch', 'WarmLaunch']);
    expect(x.metadata[META.podName]).not.toBe(y.metadata[META.podName]);
    expect(await podsOf(h, 'ses-1')).toEqual([x.metadata[META.podName]]);
    expect(await podsOf(h, 'ses-2')).toEqual([y.metadata[META.podName]]);
    await Promise.all([x.close(), y.close()]);
  });
});
