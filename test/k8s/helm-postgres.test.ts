/**
 * The Helm chart with `store.backend: postgres` on the real test cluster, as a team installs it:
 * two controller replicas (`berth serve --lease`) on one Postgres (a real one on the host, reached
 * by the Pods over the cluster bridge), the database URL and secrets key from an existing Secret.
 * One replica leads and labels its Pod berth.dev/leader (the Service selects it); the other stands
 * by (Ready through /readyz?standby=ok, but /readyz answers 503 "standby"). The leader is killed
 * with a ready session, again and again, two ways: its Pod force-deleted (`kubectl delete pod
 * --grace-period=0 --force`: the kubelet still sends SIGTERM, so it releases the Lease, and the
 * standby or the Deployment's replacement Pod takes it at once) and its process SIGKILLed (no
 * release: the standby waits for the Lease to lapse, unless the restarted container, same identity,
 * takes it back first). Each time the new leader serves the session without re-running its agent. Killed mid-launch, the launch ends ready (or failed and resumable); killed mid-rm, the
 * session is gone or removable. Postgres restarted under a launch: the controller reconnects and the
 * session's rows are kept. A second profile has a warm pool: only the leader makes members, the pool
 * never holds more than its size, launches claim warm, and after a leader kill the next leader
 * refills it. At the end nothing Berth-labelled is left but the pool's members. Takeover and launch
 * times are printed (no timing assertions). */
import { randomBytes } from 'node:crypto';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BerthApiError } from '../../src/api/errors.js';
import type { SessionView } from '../../src/controller/service.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { ensureArtifacts, FAST_AGENT_ENV } from './support/berth.js';
import { apiServerAddress, forceDeletePod, installChart, killContainer, probePod, serviceApi, untilNewLeaderReady, untilReadyz, waitForLeader, type ChartRelease, type ServiceApi } from './support/chart-release.js';
import { CONTROLLER_IMAGE_BUILD_TIMEOUT_MS, controllerImage } from './support/controller-image.js';
import { clusterEnv, requireEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { removeHelmHome } from './support/helm.js';
import { loadKubeConfig } from './support/kube.js';
import { createTestNamespace, type TestNamespace } from './support/namespace.js';
import { sleep, waitFor } from './support/wait.js';

const env = clusterEnv();
const RELEASE = 'berth-pg';
/**
 * Lease 6 s, renew deadline 4 s, retry 1 s (BERTH_LEASE_TIMINGS through extraEnv): kills take
 * seconds, and a renewal slowed by a loaded machine does not end a term.
 */
const TIMINGS = '6000,4000,1000';
/** Leader kills with a ready session, of each kind. */
const KILLS = 5;
type KillKind = 'delete' | 'sigkill';
const KIND_LABEL: Record<KillKind, string> = { delete: 'Pod force-deleted (SIGTERM: the Lease is released)', sigkill: 'process SIGKILLed (the Lease lapses)' };
const MARKER = 'marker-helm-postgres\n';
/** The pooled profile's size. */
const POOL_SIZE = 2;

/** A session name of its own per run: a retried test must not trip over the name its first run took. */
const unique = (name: string): string => `${name}-${randomBytes(3).toString('hex')}`;

const ms = (xs: number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  return `${xs.map((x) => Math.round(x)).join(', ')} ms; p50 ${Math.round(s[Math.floor(s.length / 2)] ?? NaN)} ms, max ${Math.round(s.at(-1) ?? NaN)} ms`;
};

describe('the Helm chart with store postgres: two replicas, the leader killed', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let releaseNs: TestNamespace;
  let sessionsNs: TestNamespace;
  let db: TestPostgres;
  let repo: TestRepo;
  let release: ChartRelease;
  let token = '';
  let api: ServiceApi | undefined;
  const takeovers: Record<KillKind, number[]> = { delete: [], sigkill: [] };
  /** Who took over after each kill: the standby, or the killed leader's restarted container. */
  const takenBy: Record<KillKind, string[]> = { delete: [], sigkill: [] };
  const launchMs: number[] = [];
  let transitionsAtStart = 0;

  const client = (): ServiceApi['client'] => api!.client;

  /** A new port-forward of the Service once a leader is Ready (kubectl picks a Ready Pod). */
  async function reconnect(): Promise<void> {
    await api?.close();
    api = undefined;
    await waitForLeader(release, 2);
    api = await serviceApi(release, token);
  }

  /** The session once it is no longer launching/stopping/removing; a lost connection (a new leader) is forwarded again. */
  async function settled(id: string, timeoutMs = 240_000): Promise<SessionView> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const v = await client().get(id);
        if (v.state !== 'launching' && v.state !== 'stopping' && v.state !== 'removing') return v;
      } catch (err) {
        if (err instanceof BerthApiError) throw err;
        if (Date.now() > deadline) throw err;
        await reconnect();
      }
      if (Date.now() > deadline) throw new Error(`session ${id} not settled after ${timeoutMs} ms`);
      await sleep(250);
    }
  }

  async function launchReady(name: string): Promise<SessionView> {
    const t0 = performance.now();
    const launched = await client().launch({ repository: { url: repo.url }, executor: 'k8s', agent: 'fast', name: unique(name) });
    const v = await settled(launched.id);
    expect(v.state, JSON.stringify(v.error)).toBe('ready');
    launchMs.push(performance.now() - t0);
    return v;
  }

  async function catMarker(id: string): Promise<string> {
    let stdout = '';
    const dec = new TextDecoder();
    await client().exec(id, { argv: ['cat', 'BERTH_MARKER'] }, { onOutput: (c) => (stdout += c.stream === 'stdout' ? dec.decode(c.data) : '') });
    return stdout;
  }

  /**
   * Finds the leader and the standby (its own /readyz 503 "standby", through a port-forward to it);
   * `fire` kills the leader (`kind`) and records the ms until a new Lease term's holder answers
   * /readyz 200: the standby, the Deployment's replacement Pod (after a deletion the released Lease
   * goes to whichever asks first) or, after a SIGKILL, the leader's own restarted container (same
   * Pod name, so same identity: it may take its unexpired Lease back at once). Then it waits for a
   * labelled leader and a standby again and forwards the Service anew.
   */
  async function armKill(kind: KillKind): Promise<{ fire(): Promise<void> }> {
    const { leader, standbys } = await waitForLeader(release, 2);
    const leaderPod = (await release.pods()).find((p) => p.metadata?.name === leader)!;
    const standby = await probePod(kc, releaseNs.name, standbys[0]!);
    await untilReadyz(standby, (s) => s.status === 503 && s.reason === 'standby', 'a standby').finally(() => standby.close());
    const old = await probePod(kc, releaseNs.name, leader);
    const term = await release.leaseTransitions();
    return {
      async fire() {
        const t0 = performance.now();
        if (kind === 'delete') await forceDeletePod(releaseNs.name, leader);
        else await killContainer(leaderPod);
        await untilReadyz(old, (s) => s.status !== 200, 'gone').finally(() => old.close()); // the killed process answers no more
        const { at, pod } = await untilNewLeaderReady(kc, release, term);
        const after = await waitForLeader(release, 2);
        if (after.leader !== pod) {
          const log = await release.leaderLog();
          // A term ended by its renew deadline is timing (a Pod starved of CPU on a loaded machine
          // for seconds), which the next leader answers for: reported, not failed. Any other
          // second change of leader is a logic error.
          if (!/leader election: stopped leading \{[^\n]*"reason":"renew-deadline"/.test(log)) expect.fail(`${pod} answered as the new leader, then ${after.leader} led; the controllers logged:\n${log}`);
          console.warn(`[helm-postgres] ${pod} answered as the new leader, then its renewals missed the deadline and ${after.leader} took over:\n${log}`);
        }
        const next = await probePod(kc, releaseNs.name, after.standbys[0]!);
        await untilReadyz(next, (s) => s.status === 503 && s.reason === 'standby', 'the next standby').finally(() => next.close());
        await reconnect();
        takeovers[kind].push(at - t0);
        takenBy[kind].push(pod === leader ? 'restarted' : pod === standbys[0] ? 'standby' : 'replacement');
      },
    };
  }

  beforeAll(async () => {
    ensureArtifacts();
    const image = await controllerImage();
    kc = loadKubeConfig(env.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    releaseNs = await createTestNamespace(kc, 'helm-pg', { podSecurity: 'restricted' });
    sessionsNs = await createTestNamespace(kc, 'helm-pg-sessions', { podSecurity: 'restricted' });
    repo = await createTestRepo('helm-pg', { 'README.md': '# helm postgres\n', BERTH_MARKER: MARKER });
    const hostIp = requireEnv('BERTH_TEST_HOST_IP');
    db = await startPostgres({ listen: { address: hostIp, clients: `${hostIp.slice(0, hostIp.lastIndexOf('.'))}.0/24` } });
    await db.createDatabase('berth');
    await core.createNamespacedSecret({
      namespace: releaseNs.name,
      body: { metadata: { name: 'berth-db' }, stringData: { 'database-url': db.url('berth', hostIp), 'secret-key': randomBytes(32).toString('base64') } },
    });
    const apiServer = apiServerAddress(kc);
    const colon = image.lastIndexOf(':');
    release = await installChart(kc, RELEASE, releaseNs.name, {
      image: { repository: image.slice(0, colon), tag: image.slice(colon + 1), pullPolicy: 'Never' },
      replicaCount: 2,
      store: { backend: 'postgres', postgres: { existingSecret: 'berth-db' } },
      sessions: {
        namespace: sessionsNs.name,
        podTemplate: { spec: { enableServiceLinks: false, containers: [{ name: 'agent', image: env.agentImage, imagePullPolicy: 'Never' }] } },
        kubernetes: { workspace: { mode: 'managed_pvc', size: '1Gi' } },
      },
      config: {
        agents: { fast: { command: ['{{agentctl}}', 'demo-agent'], env: FAST_AGENT_ENV } },
        // a second profile on the same executor with a warm pool: only the leader makes members
        profiles: { pooled: { executor: 'kubernetes', kubernetes: { pod_template_file: '/etc/berth/config/pod-template.yaml', workspace: { mode: 'managed_pvc', size: '1Gi' } }, pool: { size: POOL_SIZE } } },
      },
      extraEnv: [
        { name: 'KUBERNETES_SERVICE_HOST', value: apiServer.host },
        { name: 'KUBERNETES_SERVICE_PORT', value: apiServer.port },
        { name: 'BERTH_LEASE_TIMINGS', value: TIMINGS },
      ],
      terminationGracePeriodSeconds: 10,
    });
    token = await release.token();
    await reconnect();
    transitionsAtStart = await release.leaseTransitions();
  }, CONTROLLER_IMAGE_BUILD_TIMEOUT_MS + 300_000);

  afterAll(async () => {
    await api?.close();
    if (release) await release.uninstall().catch((err: unknown) => console.error(String(err)));
    await sessionsNs?.cleanup();
    await releaseNs?.cleanup();
    await db?.close();
    await repo?.remove();
    removeHelmHome();
  }, 300_000);

  it(`keeps a ready session through ${KILLS} leader Pod deletions and ${KILLS} leader SIGKILLs, its agent never run again`, async () => {
    const ready = await launchReady('survivor');
    const survivor = ready.id;
    const agentId = ready.agentProcess?.id;
    expect(agentId).toBeDefined();
    for (let k = 0; k < 2 * KILLS; k++) {
      const kind: KillKind = k % 2 === 0 ? 'delete' : 'sigkill';
      await (await armKill(kind)).fire();
      const view = await settled(survivor);
      expect(view.state, `after kill ${k + 1} (${kind}): ${JSON.stringify(view.error)}`).toBe('ready');
      expect(view.agentProcess?.id, 'the agent was not run again').toBe(agentId);
    }
    expect(await catMarker(survivor)).toBe(MARKER);
    for (const kind of ['delete', 'sigkill'] as const) {
      console.log(`[helm-postgres] takeover, leader ${KIND_LABEL[kind]} (lease ${TIMINGS} ms), kill → a leader's /readyz 200: ${ms(takeovers[kind])}; taken over by: ${takenBy[kind].join(', ')}`);
    }
  }, 1_200_000);

  for (const kind of ['delete', 'sigkill'] as const) {
    it(`finishes (or lets resume) a launch whose leader was killed mid-launch (${kind})`, async () => {
      const kill = await armKill(kind);
      const launched = await client().launch({ repository: { url: repo.url }, executor: 'k8s', agent: 'fast', name: unique(`mid-launch-${kind}`) });
      await kill.fire();
      const after = await settled(launched.id);
      expect(['ready', 'failed'], JSON.stringify(after.error)).toContain(after.state);
      if (after.state === 'failed') {
        await client().resume(launched.id);
        expect((await settled(launched.id)).state).toBe('ready');
      }
      console.log(`[helm-postgres] mid-launch kill (${kind}): the launch ended ${after.state}`);
      expect(await catMarker(launched.id)).toBe(MARKER);
    }, 600_000);

    it(`leaves a session whose leader was killed mid-rm (${kind}) gone or removable`, async () => {
      const doomed = await launchReady(`mid-rm-${kind}`);
      const kill = await armKill(kind);
      const removing = client()
        .remove(doomed.id)
        .catch(() => undefined); // the connection dies with the leader
      await waitFor('the removal under way', async () => {
        try {
          return (await client().get(doomed.id)).state === 'removing' ? true : undefined;
        } catch (err) {
          if (err instanceof BerthApiError && err.status === 404) return true;
          throw err;
        }
      }, { timeoutMs: 30_000, intervalMs: 50 });
      await kill.fire();
      await removing;
      const left = await settled(doomed.id).catch((err: unknown) => (err instanceof BerthApiError && err.status === 404 ? null : Promise.reject(err)));
      console.log(`[helm-postgres] mid-rm kill (${kind}): the session was ${left === null ? 'gone' : `left ${left.state}, removed again`}`);
      if (left !== null) await client().remove(doomed.id);
      await expect(client().get(doomed.id)).rejects.toMatchObject({ status: 404 });
    }, 600_000);
  }

  it('rides out a Postgres restart under a launch: the launch ends ready or resumable, its row is kept', async () => {
    const before = (await waitForLeader(release, 2)).leader;
    const t0 = performance.now();
    const launched = await client().launch({ repository: { url: repo.url }, executor: 'k8s', agent: 'fast', name: unique('pg-restart') });
    const down = performance.now();
    await db.stop();
    await db.start();
    const downMs = performance.now() - down;
    const whenBack = await client()
      .get(launched.id)
      .then((v) => v.state)
      .catch((err: unknown) => `unreadable (${err instanceof Error ? err.message : String(err)})`);
    let after = await settled(launched.id);
    if (after.state === 'failed') {
      await client().resume(launched.id);
      after = await settled(launched.id);
    }
    expect(after.state, JSON.stringify(after.error)).toBe('ready');
    console.log(`[helm-postgres] launch across a Postgres restart (down ${Math.round(downMs)} ms; the session was ${whenBack} when it was back): ${Math.round(performance.now() - t0)} ms; leader ${before} → ${(await waitForLeader(release, 2)).leader}`);
    const sql = new pg.Client({ connectionString: db.url('berth') });
    await sql.connect();
    try {
      const rows = await sql.query<{ state: string }>('SELECT state FROM sessions WHERE id = $1', [launched.id]);
      expect(rows.rows.map((r) => r.state)).toEqual(['ready']);
      const runtime = await sql.query('SELECT session_id FROM runtime_inventory WHERE session_id = $1', [launched.id]);
      expect(runtime.rowCount, 'the runtime checkpoint is stored').toBe(1);
    } finally {
      await sql.end();
    }
    expect(await catMarker(launched.id)).toBe(MARKER);
  }, 600_000);

  /** The pooled profile's members as the leader's API lists them, and the member Pods in the sessions namespace. */
  async function poolNow(): Promise<{ ready: number; creating: number; total: number; pods: number }> {
    const pool = (await client().pools.list()).find((p) => p.profile === 'pooled');
    const pods = (await core.listNamespacedPod({ namespace: sessionsNs.name })).items.filter((p) => (p.metadata?.labels?.['berth.dev/session-id'] ?? '').startsWith('pool-') && !p.metadata?.deletionTimestamp);
    return { ready: pool?.ready ?? 0, creating: pool?.creating ?? 0, total: pool?.members.length ?? 0, pods: pods.length };
  }

  /** Waits until the pool is full, checking at every look that it never holds (or runs) more members than its size. */
  async function untilPoolFull(): Promise<void> {
    await waitFor(
      `${POOL_SIZE} ready members of the pooled profile`,
      async () => {
        let now;
        try {
          now = await poolNow();
        } catch (err) {
          if (err instanceof BerthApiError) throw err;
          await reconnect(); // a new leader
          return undefined;
        }
        expect(now.total, `members recorded ${JSON.stringify(now)}`).toBeLessThanOrEqual(POOL_SIZE);
        expect(now.pods, `member Pods running ${JSON.stringify(now)}`).toBeLessThanOrEqual(POOL_SIZE);
        return now.ready === POOL_SIZE && now.pods === POOL_SIZE ? true : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 250 },
    );
  }

  async function launchWarm(name: string): Promise<SessionView> {
    const launched = await client().launch({ repository: { url: repo.url }, executor: 'pooled', agent: 'fast', name: unique(name) });
    const v = await settled(launched.id);
    expect(v.state, JSON.stringify(v.error)).toBe('ready');
    expect(v.stages.find((st) => st.name === 'pool'), JSON.stringify(v.stages)).toMatchObject({ reason: 'Warm' });
    expect(await catMarker(v.id)).toBe(MARKER);
    return v;
  }

  it('keeps a warm pool under the leader only: full, never over its size, warm launches; refilled by the next leader after a kill', async () => {
    await untilPoolFull();
    const first = await launchWarm('warm-1');
    await untilPoolFull(); // refilled by the leader, never past its size
    const kill = await armKill('delete');
    await kill.fire();
    await untilPoolFull(); // the new leader's pool: the members the old one made are claimable, nothing doubled
    const second = await launchWarm('warm-2');
    expect(second.id).not.toBe(first.id);
    await untilPoolFull();
    for (const id of [first.id, second.id]) await client().remove(id);
  }, 900_000);

  it("removes every session and leaves nothing Berth-labelled in the sessions namespace but the warm pool's members", async () => {
    await launchReady('last');
    for (const s of await client().list()) await client().remove(s.id);
    expect(await client().list()).toEqual([]);
    const selector = 'app.kubernetes.io/managed-by=berth';
    const notMember = (o: { metadata?: { name?: string; labels?: Record<string, string> } }): boolean => !(o.metadata?.labels?.['berth.dev/session-id'] ?? '').startsWith('pool-');
    const pods = (await core.listNamespacedPod({ namespace: sessionsNs.name, labelSelector: selector })).items.filter(notMember);
    const pvcs = (await core.listNamespacedPersistentVolumeClaim({ namespace: sessionsNs.name, labelSelector: selector })).items.filter(notMember);
    expect([...pods, ...pvcs].map((o) => o.metadata?.name), "nothing but the warm pool's members").toEqual([]);
    expect((await poolNow()).pods, 'the pool keeps its members').toBe(POOL_SIZE);
    console.log(`[helm-postgres] launch → ready through the in-cluster controller: ${ms(launchMs)}`);
    for (const kind of ['delete', 'sigkill'] as const) {
      console.log(`[helm-postgres] takeover over every ${kind} kill (with a ready session, mid-launch, mid-rm): ${ms(takeovers[kind])}; taken over by: ${takenBy[kind].join(', ')}`);
    }
    const kills = takeovers.delete.length + takeovers.sigkill.length;
    const terms = (await release.leaseTransitions()) - transitionsAtStart;
    console.log(`[helm-postgres] Lease terms begun since the install: ${terms} for ${kills} kills (more: a leader stepped down unasked)`);
    if (terms > kills) console.warn(`[helm-postgres] what the controllers logged of their terms:\n${await release.leaderLog()}`);
  }, 300_000);
});
