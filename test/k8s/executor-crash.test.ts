/**
 * kill -9 of the controller at every checkpoint of a Kubernetes launch and of a resume after stop
 * (issue 9), and right after each create committed but before its UID was recorded: a child process runs the controller with the test crash hook, dies at the point (exit
 * 137), and a new controller recovers. For every point the session ends ready or fully rolled back,
 * the Pods and PVCs labelled with its session id are exactly the ones its inventory row records (no
 * object without a row, no row without its objects), a ready session serves an exec, and after
 * `remove` nothing is left. Each point runs on its own data dir (its own controller) in one
 * namespace, as the executor's ServiceAccount.
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type V1ObjectMeta } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findInstallRoot, loadConfig } from '../../src/config/index.js';
import { createController, type Controller } from '../../src/controller/index.js';
import { createNonceDigest } from '../../src/executors/kubernetes/compose/index.js';
import { ANNOTATION, META } from '../../src/executors/kubernetes/constants.js';
import { InventoryStore, type RuntimeRecord } from '../../src/inventory/index.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import {
  ensureArtifacts,
  execText,
  FAST_AGENT_ENV,
  imageTemplate,
  labelledLeftovers,
  launchReady,
  ROOT,
  waitForOutput,
  writeClusterConfig,
} from './support/berth.js';
import { crashChild } from './support/crash-child.js';
import { clusterEnv } from './support/env.js';
import { loadKubeConfig } from './support/kube.js';
import { createTestNamespace, type TestNamespace } from './support/namespace.js';
import { createExecutorServiceAccount, type ServiceAccountAccess } from './support/service-account.js';

const env = clusterEnv();
/** Points run side by side, each its own session and controller (2 cores: ~4 at a time). */
const CONCURRENCY = 4;
const POINT_TIMEOUT_MS = 900_000;

/**
 * `X_creating` is the intent written before a create; `before:X_created` dies after the create
 * committed but before its UID was recorded — the window a crash used to leak the object in.
 */
const FRESH_POINTS = [
  'session_created',
  'pvc_creating',
  'before:pvc_created',
  'pvc_created',
  'pvc_admitted',
  'pod_creating',
  'before:pod_created',
  'pod_created',
  'pod_admitted',
  'bootstrapped',
  'agentctl_connected',
  'secrets_stored',
  'ready',
  'agent_started',
];
const RESUME_POINTS = ['pod_creating', 'before:pod_created', 'pod_created', 'pod_admitted', 'bootstrapped', 'agentctl_connected', 'secrets_stored', 'ready', 'agent_started'];
/** The row state a crash at `point` leaves (a crash before a checkpoint leaves the one before it). */
function rowStateAt(point: string): string {
  if (point === 'before:pvc_created') return 'pvc_creating';
  if (point === 'before:pod_created') return 'pod_creating';
  if (point === 'secrets_stored') return 'agentctl_connected';
  return reachedReady(point) ? 'ready' : point;
}
/** The object a crash at `point` leaves created but not recorded by UID (only by its nonce's digest). */
function unrecordedAt(point: string): 'pod' | 'pvc' | null {
  return point === 'before:pvc_created' ? 'pvc' : point === 'before:pod_created' ? 'pod' : null;
}
/** From `ready` on, the row the crash left is final: recovery reconnects instead of rolling back. */
const reachedReady = (point: string): boolean => point === 'ready' || point === 'agent_started';

/** A tiny semaphore: at most `n` bodies at once. */
function limiter(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const queue: (() => void)[] = [];
  return async (fn) => {
    if (active >= n) await new Promise<void>((r) => queue.push(r));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      queue.shift()?.();
    }
  };
}
const limit = limiter(CONCURRENCY);

async function inventory(dataDir: string): Promise<{ sessions: string[]; row: RuntimeRecord | null; rows: number; secrets: string[] }> {
  const store = InventoryStore.open({ dataDir });
  try {
    const sessions = (await store.listSessions()).map((s) => s.id);
    return { sessions, row: sessions[0] ? await store.getRuntime(sessions[0]) : null, rows: (await store.listRuntime()).length, secrets: await store.listSecretIds() };
  } finally {
    await store.close();
  }
}

describe('kubernetes executor: kill -9 of the controller at every checkpoint, then recover', () => {
  let ns: TestNamespace;
  let sa: ServiceAccountAccess;
  let core: CoreV1Api;
  let repo: TestRepo;
  const dataDirs: string[] = [];
  const open = new Set<Controller>();

  beforeAll(async () => {
    ensureArtifacts();
    const admin = loadKubeConfig(env.kubeconfig);
    ns = await createTestNamespace(admin, 'crash', { podSecurity: 'restricted' });
    sa = await createExecutorServiceAccount(admin, ns.name);
    core = admin.makeApiClient(CoreV1Api);
    repo = await createTestRepo('crash', { 'README.md': '# crash\n', BERTH_MARKER: 'marker-crash\n' });
  });

  afterAll(async () => {
    for (const c of open) await c.close().catch(() => undefined);
    const left = ns ? await labelledLeftovers(core, ns.name) : [];
    await sa?.cleanup().catch(() => undefined);
    await ns?.cleanup();
    await repo?.remove();
    for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
    expect(left, 'no Berth-labelled Pod or PVC is left in the namespace').toEqual([]);
  });

  /** A data dir of its own with the berth.yaml of the cluster executor and profile `k8s`. */
  function newDataDir(): string {
    const dataDir = mkdtempSync(join(tmpdir(), 'berth-k8s-crash-'));
    dataDirs.push(dataDir);
    writeClusterConfig(dataDir, sa, { prefix: 'crash', profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } } });
    return dataDir;
  }

  /** A controller of the test process (no crash hook: its env is empty), recovered. */
  async function controller(dataDir: string): Promise<Controller> {
    const c = await createController({ dataDir, config: loadConfig({ dataDir, installRoot: findInstallRoot(join(ROOT, 'src', 'config')) }), env: {} });
    open.add(c);
    await c.recover();
    return c;
  }

  async function closeController(c: Controller): Promise<void> {
    await c.close();
    open.delete(c);
  }

  /** The Pods and PVCs labelled with the session's id: their UIDs and their create nonces' digests. */
  async function labelled(id: string): Promise<{ pods: { uid: string; digest: string }[]; pvcs: { uid: string; digest: string }[] }> {
    const labelSelector = `berth.dev/session-id=${id}`;
    const pods = await core.listNamespacedPod({ namespace: ns.name, labelSelector });
    const pvcs = await core.listNamespacedPersistentVolumeClaim({ namespace: ns.name, labelSelector });
    const of = (o: V1ObjectMeta | undefined): { uid: string; digest: string } => ({ uid: o?.uid ?? '?', digest: createNonceDigest(o?.annotations?.[ANNOTATION.createNonce] ?? '') });
    return { pods: pods.items.map((p) => of(p.metadata)), pvcs: pvcs.items.map((p) => of(p.metadata)) };
  }

  /** UIDs of the Pods and PVCs labelled with the session's id. */
  async function objectsOf(id: string): Promise<{ pods: string[]; pvcs: string[] }> {
    const found = await labelled(id);
    return { pods: found.pods.map((p) => p.uid), pvcs: found.pvcs.map((p) => p.uid) };
  }

  /** Exactly the objects the row records exist (a stopped row: its PVC; no row: nothing). */
  async function expectObjectsMatchRow(id: string, row: RuntimeRecord | null): Promise<void> {
    const found = await objectsOf(id);
    if (row === null) {
      expect(found, 'no row: nothing of the session is left in the cluster').toEqual({ pods: [], pvcs: [] });
      return;
    }
    const pvcUid = row.metadata[META.pvcUid];
    expect(pvcUid, 'the row records its managed PVC').toBeDefined();
    const podUid = row.metadata[META.podUid];
    expect(found, `the cluster holds exactly what the ${row.state} row records`).toEqual({ pods: row.state === 'ready' ? [podUid] : [], pvcs: [pvcUid] });
  }

  /**
   * Right after the crash, before any recovery: every labelled object is recorded by the row the
   * crash left — by UID, or the one whose create committed just before the crash (`unrecorded`) by
   * its create nonce's digest — and every object that row records exists. Returns the Pod UIDs found.
   */
  async function expectCrashStateRecorded(id: string, row: RuntimeRecord | null, unrecorded: 'pod' | 'pvc' | null): Promise<string[]> {
    const found = await labelled(id);
    const digest = row?.metadata[META.pendingCreateDigest] ?? '(none)';
    const expected = (kind: 'pod' | 'pvc', uid: string | undefined): string[] => [...(uid !== undefined ? [uid] : []), ...(unrecorded === kind ? [`digest ${digest}`] : [])];
    const seen = (objects: { uid: string; digest: string }[], uid: string | undefined): string[] => objects.map((o) => (o.uid !== uid && o.digest === digest ? `digest ${o.digest}` : o.uid));
    const podUid = row?.metadata[META.podUid];
    const pvcUid = row?.metadata[META.pvcUid];
    expect({ pods: seen(found.pods, podUid), pvcs: seen(found.pvcs, pvcUid) }, `at the crash the cluster holds exactly what the ${row?.state ?? 'missing'} row records`).toEqual({
      pods: expected('pod', podUid),
      pvcs: expected('pvc', pvcUid),
    });
    return found.pods.map((p) => p.uid);
  }

  /** A ready session serves an exec from its workspace and its agent runs. */
  async function expectServing(c: Controller, id: string): Promise<string> {
    expect(await execText(c, id, ['cat', 'BERTH_MARKER'])).toMatchObject({ exitCode: 0, stdout: 'marker-crash\n' });
    const out = await waitForOutput(c, id, /ready for instructions/);
    expect((await c.get(id)).agentProcess?.status).toBe('running');
    return out;
  }

  async function removeAndExpectNothing(c: Controller, dataDir: string, id: string): Promise<void> {
    await c.remove(id);
    expect(await objectsOf(id), 'remove deletes the Pod and the managed PVC').toEqual({ pods: [], pvcs: [] });
    expect(await inventory(dataDir)).toMatchObject({ sessions: [], rows: 0, secrets: [] });
  }

  it.concurrent.each(FRESH_POINTS.map((p) => [p]))(
    'a fresh launch killed at %s ends ready or fully rolled back',
    (point) =>
      limit(async () => {
        const dataDir = newDataDir();
        const child = await crashChild({ CHILD_DATA_DIR: dataDir, CHILD_REPO_URL: repo.url }, point);
        expect(child.status, `the child must die at ${point} (stdout: ${child.stdout.slice(-300)} stderr: ${child.stderr.slice(-800)})`).toBe(137);
        const id = (await inventory(dataDir)).sessions[0];
        expect(id, 'the session was recorded').toBeDefined();
        const crashed = (await inventory(dataDir)).row;
        expect(crashed?.state ?? null, 'the row the crash left').toBe(point === 'session_created' ? null : rowStateAt(point));
        const podsAtCrash = await expectCrashStateRecorded(id!, crashed, unrecordedAt(point));

        const c = await controller(dataDir);
        const view = await c.get(id!);
        const after = await inventory(dataDir);
        await expectObjectsMatchRow(id!, after.row);
        if (reachedReady(point)) {
          expect(view.error).toBeNull();
          expect(view.state).toBe('ready');
          expect(after.row?.state).toBe('ready');
          expect(after.secrets).toHaveLength(2);
          expect((await objectsOf(id!)).pods, 'recovery reconnected to the same Pod').toEqual(podsAtCrash);
          const out = await expectServing(c, id!);
          expect(out.match(/agent> starting/g), 'the agent ran exactly once').toHaveLength(1);
        } else {
          expect(view.state).toBe('failed');
          expect(view.error?.message).toMatch(/^launch was interrupted by a controller restart/);
          expect(view.error?.message).toMatch(/(everything it created was removed|nothing is left running) \(resume to launch again\)$/);
          expect(after.row, 'the provisional row is released').toBeNull();
          expect(after.secrets, 'no secret outlives its launch').toEqual([]);
        }
        await removeAndExpectNothing(c, dataDir, id!);
        await closeController(c);
      }),
    POINT_TIMEOUT_MS,
  );

  it.concurrent.each(RESUME_POINTS.map((p) => [p]))(
    'a resume after stop killed at %s ends ready or stopped again, with its PVC',
    (point) =>
      limit(async () => {
        const dataDir = newDataDir();
        const c0 = await controller(dataDir);
        const v = await launchReady(c0, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
        await execText(c0, v.id, ['sh', '-c', 'echo kept > .resume-marker']);
        expect((await c0.stop(v.id)).state).toBe('stopped');
        const pvcUid = (await objectsOf(v.id)).pvcs;
        expect(pvcUid).toHaveLength(1);
        await closeController(c0);

        const child = await crashChild({ CHILD_DATA_DIR: dataDir, CHILD_SESSION: v.id }, point);
        expect(child.status, `the child must die at ${point} (stdout: ${child.stdout.slice(-300)} stderr: ${child.stderr.slice(-800)})`).toBe(137);
        const crashed = (await inventory(dataDir)).row;
        expect(crashed?.state, 'the row the crash left').toBe(rowStateAt(point));
        const podsAtCrash = await expectCrashStateRecorded(v.id, crashed, unrecordedAt(point));
        expect(podsAtCrash, 'the replacement Pod was created').toHaveLength(point === 'pod_creating' ? 0 : 1);

        const c = await controller(dataDir);
        const view = await c.get(v.id);
        const after = await inventory(dataDir);
        await expectObjectsMatchRow(v.id, after.row);
        expect((await objectsOf(v.id)).pvcs, 'a resume never loses the PVC').toEqual(pvcUid);
        if (reachedReady(point)) {
          expect(view.error).toBeNull();
          expect(view.state).toBe('ready');
          expect(after.row?.state).toBe('ready');
          expect((await objectsOf(v.id)).pods, 'recovery reconnected to the replacement Pod').toEqual(podsAtCrash);
        } else {
          expect(view.state).toBe('failed');
          expect(view.error?.message).toMatch(/^resume was interrupted by a controller restart .*the workspace kept \(resume again\)$/);
          expect(after.row?.state).toBe('stopped');
          expect((await c.resume(v.id)).state, 'resumable after the rollback').toBe('ready');
          await expectObjectsMatchRow(v.id, (await inventory(dataDir)).row);
        }
        await expectServing(c, v.id);
        expect((await execText(c, v.id, ['cat', '.resume-marker'])).stdout, 'the work survived').toBe('kept\n');
        await removeAndExpectNothing(c, dataDir, v.id);
        await closeController(c);
      }),
    POINT_TIMEOUT_MS,
  );
});
