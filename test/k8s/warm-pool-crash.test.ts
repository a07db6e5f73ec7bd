/**
 * kill -9 of the controller in the middle of a warm launch (issue 22): a child process claims the
 * pool's one ready member and dies right before the session records it (`before:pool_claimed`: the
 * objects are relabelled to the session, only the member row says so), right after
 * (`pool_claimed`), and once agentctl is connected. A new controller recovers: the session ends
 * failed with everything of it removed, the member is never left with two owners or none (no
 * `claimed` row survives, every member row's Pod exists and no Pod of the session outlives it),
 * and the pool refills. Size 0 then leaves nothing labelled by Berth.
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findInstallRoot, loadConfig } from '../../src/config/index.js';
import { createController, type Controller } from '../../src/controller/index.js';
import { ensureArtifacts, imageTemplate, labelledLeftovers, ROOT, writeClusterConfig, type BerthOnClusterOptions } from './support/berth.js';
import { crashChild } from './support/crash-child.js';
import { clusterEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { loadKubeConfig } from './support/kube.js';
import { createTestNamespace, type TestNamespace } from './support/namespace.js';
import { createExecutorServiceAccount, type ServiceAccountAccess } from './support/service-account.js';
import { waitFor } from './support/wait.js';

const env = clusterEnv();
const POINTS = ['before:pool_claimed', 'pool_claimed', 'agentctl_connected'];

interface MemberRow {
  id: string;
  state: string;
  metadata: string;
}

describe('warm pool: kill -9 of the controller during a claim, then recover', () => {
  let ns: TestNamespace;
  let sa: ServiceAccountAccess;
  let core: CoreV1Api;
  let repo: TestRepo;
  const dataDirs: string[] = [];
  const open = new Set<Controller>();

  beforeAll(async () => {
    ensureArtifacts();
    const admin = loadKubeConfig(env.kubeconfig);
    ns = await createTestNamespace(admin, 'poolcrash', { podSecurity: 'restricted' });
    sa = await createExecutorServiceAccount(admin, ns.name);
    core = admin.makeApiClient(CoreV1Api);
    repo = await createTestRepo('poolcrash', { 'README.md': '# pool crash\n' });
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

  const config = (dataDir: string, size: number): void => {
    const opts: BerthOnClusterOptions = {
      prefix: 'poolcrash',
      profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
      profileFields: { k8s: { pool: { size } } },
    };
    writeClusterConfig(dataDir, sa, opts);
  };

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

  const rows = (dataDir: string): MemberRow[] => {
    const db = new Database(join(dataDir, 'state', 'berth.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare('SELECT id, state, metadata FROM pool_members ORDER BY created_at').all() as MemberRow[];
    } finally {
      db.close();
    }
  };
  const sessions = (dataDir: string): string[] => {
    const db = new Database(join(dataDir, 'state', 'berth.db'), { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('SELECT id FROM sessions').all() as { id: string }[]).map((r) => r.id);
    } finally {
      db.close();
    }
  };
  const readyMember = (dataDir: string): Promise<MemberRow> =>
    waitFor('a ready pool member', async () => rows(dataDir).find((r) => r.state === 'ready'), { timeoutMs: 180_000, intervalMs: 250 });
  const podUids = async (selector: string): Promise<string[]> =>
    (await core.listNamespacedPod({ namespace: ns.name, labelSelector: selector })).items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata?.uid ?? '');

  it.concurrent.each(POINTS.map((p) => [p]))(
    'a warm launch killed at %s: the session is cleaned up, the member never has two owners, the pool refills',
    async (point) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'berth-k8s-poolcrash-'));
      dataDirs.push(dataDir);
      config(dataDir, 1);
      const warmup = await controller(dataDir);
      const member = await readyMember(dataDir);
      await closeController(warmup);

      const child = await crashChild({ CHILD_DATA_DIR: dataDir, CHILD_REPO_URL: repo.url }, point);
      expect(child.status, `the child must die at ${point}: ${child.stdout.slice(-300)} ${child.stderr.slice(-800)}`).toBe(137);
      const [id] = sessions(dataDir);
      expect(id).toBeDefined();
      const memberPod = (JSON.parse(member.metadata) as Record<string, string>).kubernetes_pod_uid;
      expect(await podUids(`berth.dev/session-id=${id}`), 'at the crash the claimed Pod carries the session').toEqual([memberPod]);

      const c = await controller(dataDir);
      const view = await c.waitUntilSettled(id!);
      expect(view.state).toBe('failed');
      expect(view.error?.message).toMatch(/^launch was interrupted by a controller restart/);
      await waitFor('the session has nothing left and the pool refilled', async () => {
        const left = await podUids(`berth.dev/session-id=${id}`);
        const all = rows(dataDir);
        return left.length === 0 && all.length === 1 && all[0]!.state === 'ready' ? true : undefined;
      }, { timeoutMs: 180_000, intervalMs: 250 });
      expect(rows(dataDir).some((r) => r.state === 'claimed'), 'no claimed row survives recovery').toBe(false);
      const refilled = rows(dataDir)[0]!;
      expect(refilled.id).not.toBe(member.id);
      expect(await podUids(`berth.dev/session-id=${refilled.id}`)).toEqual([(JSON.parse(refilled.metadata) as Record<string, string>).kubernetes_pod_uid]);
      await c.remove(id!);
      await closeController(c);

      config(dataDir, 0);
      const drained = await controller(dataDir);
      await waitFor('the pool emptied', async () => (rows(dataDir).length === 0 ? true : undefined), { timeoutMs: 120_000, intervalMs: 250 });
      await closeController(drained);
    },
    900_000,
  );
});
