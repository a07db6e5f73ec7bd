// The Kubernetes executor under API faults, through a fault-injecting proxy in front of the real
// API server (support/api-proxy.ts): a Pod or PVC create whose answer is lost after the API server
// committed it (503 instead, or a cut socket) is reconciled by its create nonce and adopted exactly
// once; watches cut again and again while the Pod starts are relisted; a port-forward cut while the
// session is ready is re-forwarded by the next command (same Pod, the agent not re-run); a slow API
// still launches and cleans up; and a Pod create the API server keeps refusing fails the launch
// with what to do and rolls the PVC back. Cases run one after another: the rules match by path.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApiProxy, type ApiProxy, type SeenRequest } from './support/api-proxy.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, waitForOutput, type BerthOnCluster } from './support/berth.js';
import { clusterEnv, requireEnv } from './support/env.js';
import { launchFailing, sessionLeftovers, stageOf } from './support/failures.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { loadKubeConfig } from './support/kube.js';

const env = clusterEnv();

describe('kubernetes executor: API faults through a proxy', () => {
  let proxy: ApiProxy;
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    const admin = loadKubeConfig(env.kubeconfig);
    proxy = await startApiProxy(admin.getCurrentCluster()!.server, `${requireEnv('BERTH_CLUSTER_CACHE')}/pki`);
    repo = await createTestRepo('faults', { 'README.md': '# faults\n', BERTH_MARKER: 'marker-faults\n' });
    h = await berthOnCluster({
      prefix: 'faults',
      profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
      kubeconfigFor: (path) => proxy.kubeconfigFor(path),
    });
  });

  afterEach(() => proxy?.clearRules());

  afterAll(async () => {
    try {
      if (h) expect(await h.leftovers(), 'nothing Berth-labelled is left in the namespace').toEqual([]);
    } finally {
      await h?.close();
      await proxy?.close();
      await repo?.remove();
    }
  });

  const pods = () => new RegExp(`^/api/v1/namespaces/${h.ns.name}/pods(\\?|$)`);
  const pvcs = () => new RegExp(`^/api/v1/namespaces/${h.ns.name}/persistentvolumeclaims(\\?|$)`);
  const launch = () => launchReady(h.controller, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
  const sessionPods = async (id: string) => (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${id}` })).items;
  const sessionPvcs = async (id: string) => (await h.core.listNamespacedPersistentVolumeClaim({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${id}` })).items;
  const creates = (path: RegExp, since: number) => proxy.seen().slice(since).filter((r) => r.method === 'POST' && path.test(r.url));

  /**
   * The launch read the object back by name between the lost answer and its next step (the Pod's
   * first exec, or the Pod create after a PVC): the reconciling GET.
   */
  const readBack = (kind: 'pods' | 'persistentvolumeclaims', since: number): boolean => {
    const log = proxy.seen().slice(since);
    const lost = log.findIndex((r) => r.faulted && r.method === 'POST');
    const next = kind === 'pods' ? (r: SeenRequest) => /\/exec\?/.test(r.url) : (r: SeenRequest) => r.method === 'POST' && pods().test(r.url);
    const end = log.findIndex((r, i) => i > lost && next(r));
    const byName = new RegExp(`^/api/v1/namespaces/${h.ns.name}/${kind}/[a-z0-9-]+$`);
    return lost >= 0 && log.slice(lost + 1, end < 0 ? undefined : end).some((r) => r.method === 'GET' && byName.test(r.url));
  };

  /** Removes the session and checks that nothing of it is left. */
  async function removeClean(id: string): Promise<void> {
    await h.controller.remove(id);
    expect(await sessionLeftovers(h, id), 'rm removed the Pod and the PVC').toEqual([]);
  }

  /** The session is ready on exactly one Pod and one PVC, and commands run in it. */
  async function expectOneOfEach(id: string): Promise<void> {
    expect((await sessionPods(id)).length, 'exactly one Pod').toBe(1);
    expect((await sessionPvcs(id)).length, 'exactly one PVC').toBe(1);
    expect((await execText(h.controller, id, ['cat', 'BERTH_MARKER'])).stdout).toBe('marker-faults\n');
  }

  it('a Pod create answered 503 after the API server stored it is adopted by its nonce: one Pod, no duplicate', async () => {
    const since = proxy.seen().length;
    const rule = proxy.add({ method: 'POST', path: pods(), times: 1, action: { kind: 'fail-after', status: 503 } });
    const v = await launch();
    expect(rule.hits(), 'the fault was injected').toBe(1);
    expect(creates(pods(), since).map((r) => r.status), 'one create, answered 503; no second create').toEqual([503]);
    expect(readBack('pods', since), 'reconciled by a GET').toBe(true);
    await expectOneOfEach(v.id);
    await removeClean(v.id);
  });

  it('a PVC create answered 503 after the API server stored it is adopted by its nonce: one PVC, no duplicate', async () => {
    const since = proxy.seen().length;
    const rule = proxy.add({ method: 'POST', path: pvcs(), times: 1, action: { kind: 'fail-after', status: 503 } });
    const v = await launch();
    expect(rule.hits()).toBe(1);
    expect(creates(pvcs(), since).map((r) => r.status)).toEqual([503]);
    expect(readBack('persistentvolumeclaims', since), 'reconciled by a GET').toBe(true);
    await expectOneOfEach(v.id);
    await removeClean(v.id);
  });

  it('a Pod create whose connection is cut after the API server stored it is adopted: one Pod, no orphan', async () => {
    const since = proxy.seen().length;
    const rule = proxy.add({ method: 'POST', path: pods(), times: 1, action: { kind: 'cut-after' } });
    const v = await launch();
    expect(rule.hits()).toBe(1);
    expect(creates(pods(), since).map((r) => r.status), 'one create, its socket cut').toEqual([0]);
    expect(readBack('pods', since), 'reconciled by a GET').toBe(true);
    await expectOneOfEach(v.id);
    await removeClean(v.id);
  });

  it('watches cut again and again while the Pod starts are relisted: the launch completes', async () => {
    const since = proxy.seen().length;
    const watches = new RegExp(`^/api/v1/namespaces/${h.ns.name}/[a-z]+\\?.*watch=true`);
    const rule = proxy.add({ method: 'GET', path: watches, action: { kind: 'cut-stream', bytes: 1 } });
    const v = await launch();
    proxy.clearRules();
    const cut = proxy.seen().slice(since).filter((r) => r.faulted && watches.test(r.url));
    expect(rule.hits(), 'more than one watch was cut').toBeGreaterThan(1);
    expect(cut.length).toBe(rule.hits());
    const relists = proxy.seen().slice(since).filter((r) => r.method === 'GET' && pods().test(r.url) && !r.url.includes('watch=true'));
    expect(relists.length, 'each cut watch was followed by a relist').toBeGreaterThan(1);
    await expectOneOfEach(v.id);
    await removeClean(v.id);
  });

  it('a port-forward cut while the session is ready is re-forwarded by the next command: same Pod, the agent not re-run', async () => {
    const c = h.controller;
    const v = await launch();
    await waitForOutput(c, v.id, /ready for instructions/);
    const before = await sessionPods(v.id);
    const follow = new AbortController();
    // A follower holds a forwarded connection open, so there is a live port-forward WebSocket to cut;
    // it must ride through the cut: the same run, every sequence number once, new output after it.
    const seqs: number[] = [];
    let text = '';
    const dec = new TextDecoder();
    let followError: unknown = null;
    const followed = (async () => {
      try {
        for await (const chunk of c.logs(v.id, { follow: true, signal: follow.signal })) {
          seqs.push(chunk.seq);
          text += dec.decode(chunk.data);
        }
      } catch (err) {
        followError = err;
      }
    })();
    const forwards = /\/portforward\?/;
    for (let i = 0; i < 100 && proxy.liveStreams(forwards) === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(proxy.cutStreams(forwards), 'a live port-forward stream was cut').toBeGreaterThan(0);
    await c.sendInput(v.id, 'after the cut\n');
    for (let i = 0; i < 300 && !text.includes('you said: after the cut') && followError === null; i++) await new Promise((r) => setTimeout(r, 100));
    follow.abort();
    await followed;
    expect(followError, 'the follow survived the cut').toBeNull();
    expect(text, 'the follower saw output written after the cut').toContain('you said: after the cut');
    expect(seqs, 'no chunk twice, none skipped').toEqual(seqs.map((_, i) => seqs[0]! + i));
    expect(text.match(/agent> starting/g), 'the output from the start, once').toHaveLength(1);
    const upgradesBefore = proxy.seen().filter((r) => r.upgrade && forwards.test(r.url)).length;
    expect((await execText(c, v.id, ['cat', 'BERTH_MARKER'])).stdout, 'the next command works').toBe('marker-faults\n');
    expect(proxy.seen().filter((r) => r.upgrade && forwards.test(r.url)).length, 'through a new port-forward').toBeGreaterThan(upgradesBefore);
    const after = await sessionPods(v.id);
    expect(after.map((p) => p.metadata?.uid), 'the same Pod').toEqual(before.map((p) => p.metadata?.uid));
    const view = await c.get(v.id);
    expect(view.state).toBe('ready');
    expect(view.agentProcess, 'the agent keeps running, not re-run').toMatchObject({ id: 'agent-1', status: 'running' });
    const out = await waitForOutput(c, v.id, /ready for instructions/);
    expect(out.match(/agent> starting/g), 'the agent started once').toHaveLength(1);
    await removeClean(v.id);
  });

  it('an API that answers every request 300 ms late still launches, and stop and rm clean up everything', async () => {
    const c = h.controller;
    const rule = proxy.add({ path: /./, action: { kind: 'delay', ms: 300 } });
    const v = await launch();
    expect(rule.hits(), 'every request was delayed').toBeGreaterThan(10);
    expect((await execText(c, v.id, ['cat', 'BERTH_MARKER'])).stdout).toBe('marker-faults\n');
    const stopped = await c.stop(v.id);
    expect(stopped.state).toBe('stopped');
    expect(await sessionPods(v.id), 'stop deleted the Pod').toEqual([]);
    await removeClean(v.id);
  });

  it('a Pod create the API server keeps refusing fails the launch with what to do, and rolls the PVC back', async () => {
    const since = proxy.seen().length;
    const rule = proxy.add({ method: 'POST', path: pods(), action: { kind: 'fail-before', status: 503 } });
    const v = await launchFailing(h.controller, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    expect(rule.hits(), 'the Pod create was refused').toBeGreaterThan(0);
    expect(creates(pvcs(), since).map((r) => r.status), 'the PVC was created first').toEqual([201]);
    const stage = stageOf(v, 'pod_ready');
    expect(stage.status).toBe('failed');
    expect(v.error?.message, 'says the API server refused').toMatch(/API server refused/);
    expect(v.error?.message, 'and what to do').toMatch(/launch again/);
    expect(await sessionLeftovers(h, v.id), 'nothing with the session label remains').toEqual([]);
    await h.controller.remove(v.id);
  });
});
