// createKubeClient, the Pod/PVC calls and the access checks against the real test cluster, as the
// executor's ServiceAccount (deploy/rbac.yaml): kubeconfig sources, contexts, an exec credential
// plugin, request timeouts, errors, dry runs and deletes guarded by UID + resourceVersion.
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import {
  EXECUTOR_ACCESS,
  KubeApiError,
  KubeConfigError,
  createKubeClient,
  createPod,
  createPvc,
  deletePod,
  deletePvc,
  deniedAccess,
  getPod,
  getPvc,
  isAlreadyExists,
  isConflict,
  isForbidden,
  serverVersion,
} from '../../src/executors/kubernetes/kube/index.js';
import type { KubeClient } from '../../src/executors/kubernetes/kube/index.js';
import { clusterEnv, restrictedPod, waitForPodRunning } from './support/index.js';
import { connectionFor, executorFixture } from './support/executor-client.js';
import type { ExecutorFixture } from './support/executor-client.js';
import { createExecutorServiceAccount } from './support/service-account.js';

const env = clusterEnv();

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

describe('createKubeClient', () => {
  let fx: ExecutorFixture;
  let dir: string;

  beforeAll(async () => {
    fx = await executorFixture('kube-client');
    dir = await mkdtemp(join(tmpdir(), 'berth-kubeconfig-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await fx?.cleanup();
  });

  it('reads the server version with the ServiceAccount kubeconfig', async () => {
    const version = await serverVersion(fx.client);
    expect(version.major).toBe('1');
    expect(version.gitVersion).toMatch(/^v1\.34\./);
  });

  it('finds the kubeconfig through $KUBECONFIG, then ~/.kube/config, when no path is set', async () => {
    const fromEnv = createKubeClient(connectionFor('', fx.ns.name, { kubeconfigPath: null }), { env: { KUBECONFIG: fx.sa.kubeconfigPath } });
    expect((await deniedAccess(fromEnv, fx.ns.name, EXECUTOR_ACCESS)).map((d) => d.verb)).toEqual([]);

    const home = join(dir, 'home');
    await mkdir(join(home, '.kube'), { recursive: true });
    await writeFile(join(home, '.kube', 'config'), await readFile(fx.sa.kubeconfigPath));
    const fromHome = createKubeClient(connectionFor('', fx.ns.name, { kubeconfigPath: null }), { env: { HOME: home } });
    expect(fromHome.contextName).toBe('berth-sa');
    expect(await serverVersion(fromHome)).toMatchObject({ major: '1' });
  });

  it('uses the context named by kube_context instead of the current one', async () => {
    const config = parse(await readFile(fx.sa.kubeconfigPath, 'utf8')) as {
      clusters: { name: string; cluster: Record<string, unknown> }[];
      contexts: { name: string; context: Record<string, unknown> }[];
      'current-context': string;
    };
    config.clusters.push({ name: 'nowhere', cluster: { ...config.clusters[0]?.cluster, server: 'https://127.0.0.1:1' } });
    config.contexts.push({ name: 'broken', context: { ...config.contexts[0]?.context, cluster: 'nowhere' } });
    config['current-context'] = 'broken';
    const path = join(dir, 'two-contexts');
    await writeFile(path, stringify(config));

    const current = createKubeClient(connectionFor(path, fx.ns.name));
    const err = await rejection(serverVersion(current));
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).reason).toBe('NetworkError');

    const chosen = createKubeClient(connectionFor(path, fx.ns.name, { kubeContext: 'berth-sa' }));
    expect(chosen.contextName).toBe('berth-sa');
    expect(await serverVersion(chosen)).toMatchObject({ major: '1' });
  });

  it('names the file and the context when loading fails', () => {
    const missing = join(dir, 'does-not-exist');
    expect(() => createKubeClient(connectionFor(missing, fx.ns.name))).toThrow(KubeConfigError);
    expect(() => createKubeClient(connectionFor(missing, fx.ns.name))).toThrow(
      `kubernetes: load client configuration failed: kubeconfig ${missing} does not exist`,
    );
    expect(() => createKubeClient(connectionFor(fx.sa.kubeconfigPath, fx.ns.name, { kubeContext: 'nope' }))).toThrow(/no context "nope" \(contexts: berth-sa;/);
  });

  it('authenticates through an exec credential plugin', async () => {
    const client = createKubeClient(connectionFor(fx.sa.execKubeconfigPath, fx.ns.name));
    expect(await deniedAccess(client, fx.ns.name, EXECUTOR_ACCESS)).toEqual([]);
    // The review is answered for the plugin's identity, and the plugin really ran.
    const err = await rejection(getPod(client, 'default', 'x'));
    expect((err as KubeApiError).message).toContain(fx.sa.username);
    expect((await readFile(fx.sa.execPluginLog, 'utf8')).trim().split('\n').length).toBeGreaterThanOrEqual(1);
  });

  it('keeps a failing plugin\'s secrets out of the error', async () => {
    const plugin = join(dir, 'bad-plugin.sh');
    const secret = 'sk-live-0123456789abcdefghijklmnopqrstuv';
    await writeFile(plugin, `#!/bin/sh\necho "login failed for token=${secret}" >&2\nexit 1\n`, { mode: 0o700 });
    const config = parse(await readFile(fx.sa.execKubeconfigPath, 'utf8')) as { users: { user: { exec: { command: string } } }[] };
    (config.users[0] as { user: { exec: { command: string } } }).user.exec.command = plugin;
    const path = join(dir, 'bad-plugin-kubeconfig');
    await writeFile(path, stringify(config));
    const err = await rejection(getPod(createKubeClient(connectionFor(path, fx.ns.name)), fx.ns.name, 'x'));
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as Error).message).toContain('login failed');
    expect((err as Error).message).not.toContain(secret);
  });

  it('bounds an ordinary call by the request timeout', async () => {
    // A TCP server that accepts and never answers (not even the TLS handshake).
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const config = parse(await readFile(fx.sa.kubeconfigPath, 'utf8')) as { clusters: { cluster: { server: string } }[] };
      (config.clusters[0] as { cluster: { server: string } }).cluster.server = `https://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const path = join(dir, 'silent');
      await writeFile(path, stringify(config));
      const client = createKubeClient(connectionFor(path, fx.ns.name, { requestTimeoutSeconds: 1 }));
      const err = await rejection(getPod(client, fx.ns.name, 'x'));
      expect(err).toBeInstanceOf(KubeApiError);
      expect((err as KubeApiError).reason).toBe('ClientTimeout');
      expect((err as KubeApiError).message).toBe(`get pod ${fx.ns.name}/x: no answer from the API server within the request timeout`);
    } finally {
      sockets.forEach((s) => s.destroy());
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('deniedAccess', () => {
  let fx: ExecutorFixture;

  beforeAll(async () => {
    fx = await executorFixture('kube-access');
  });

  afterAll(async () => {
    await fx?.cleanup();
  });

  it('finds nothing missing for deploy/rbac.yaml, and exactly the verb a Role lacks', async () => {
    expect(await deniedAccess(fx.client, fx.ns.name, EXECUTOR_ACCESS)).toEqual([]);
    const partial = await createExecutorServiceAccount(fx.admin, fx.ns.name, { suffix: 'no-delete', withoutVerb: { resource: 'pods', verb: 'delete' } });
    try {
      const client = createKubeClient(connectionFor(partial.kubeconfigPath, fx.ns.name));
      const denied = await deniedAccess(client, fx.ns.name, EXECUTOR_ACCESS);
      expect(denied.map(({ verb, resource, subresource }) => ({ verb, resource, subresource }))).toEqual([
        { verb: 'delete', resource: 'pods', subresource: undefined },
      ]);
      // And nothing in a namespace the Role does not cover.
      expect(await deniedAccess(client, 'default', EXECUTOR_ACCESS)).toHaveLength(EXECUTOR_ACCESS.length);
    } finally {
      await partial.cleanup();
    }
  });
});

describe('Pod and PVC objects', () => {
  let fx: ExecutorFixture;
  let client: KubeClient;

  beforeAll(async () => {
    fx = await executorFixture('kube-objects');
    client = fx.client;
  });

  afterAll(async () => {
    await fx?.cleanup();
  });

  it('creates nothing on a dry run, then creates the Pod; a second create is AlreadyExists', async () => {
    const pod = restrictedPod({ name: 'obj', image: env.busyboxImage, command: ['sleep', '3600'] });
    const dry = await createPod(client, fx.ns.name, pod, { dryRun: true });
    expect(dry.metadata?.name).toBe('obj');
    expect(await getPod(client, fx.ns.name, 'obj')).toBeUndefined();

    const created = await createPod(client, fx.ns.name, pod);
    expect(created.metadata?.uid).toBeTruthy();
    expect((await getPod(client, fx.ns.name, 'obj'))?.metadata?.uid).toBe(created.metadata?.uid);
    const again = await rejection(createPod(client, fx.ns.name, pod));
    expect(isAlreadyExists(again)).toBe(true);
    expect((again as KubeApiError).status).toBe(409);
    expect((again as KubeApiError).message).toBe(`create pod ${fx.ns.name}/obj: pods "obj" already exists`);
  });

  it('refuses to delete a Pod whose UID or resourceVersion changed, then deletes it and waits until it is gone', async () => {
    const current = await getPod(client, fx.ns.name, 'obj');
    const uid = current?.metadata?.uid ?? '';
    const wrongUid = await rejection(deletePod(client, fx.ns.name, 'obj', { uid: '00000000-0000-0000-0000-000000000000' }, AbortSignal.timeout(30_000)));
    expect(isConflict(wrongUid)).toBe(true);
    expect((wrongUid as Error).message).toMatch(/not deleted: the object changed since it was read/);

    const stale = current?.metadata?.resourceVersion ?? '';
    await fx.admin.makeApiClient(CoreV1Api).patchNamespacedPod({
      name: 'obj',
      namespace: fx.ns.name,
      body: [{ op: 'add', path: '/metadata/labels/touched', value: 'yes' }],
    });
    const staleVersion = await rejection(deletePod(client, fx.ns.name, 'obj', { uid, resourceVersion: stale }, AbortSignal.timeout(30_000)));
    expect(isConflict(staleVersion)).toBe(true);
    expect(await getPod(client, fx.ns.name, 'obj')).toBeDefined();

    // With a fresh read it goes. The kubelet may still be writing the Pod's status (each write moves
    // the resourceVersion), so, as cleanup.ts does, a conflict means: read again and retry.
    const t0 = performance.now();
    let outcome: string | undefined;
    for (let attempt = 1; outcome === undefined; attempt++) {
      const fresh = await getPod(client, fx.ns.name, 'obj');
      try {
        outcome = await deletePod(client, fx.ns.name, 'obj', { uid, resourceVersion: fresh?.metadata?.resourceVersion }, AbortSignal.timeout(60_000));
      } catch (err) {
        if (!isConflict(err) || attempt >= 10) throw err;
      }
    }
    expect(outcome).toBe('deleted');
    console.log(`[k8s-timing] delete pod (grace 0) -> gone: ${(performance.now() - t0).toFixed(0)} ms`);
    expect(await getPod(client, fx.ns.name, 'obj')).toBeUndefined();
    expect(await deletePod(client, fx.ns.name, 'obj', { uid }, AbortSignal.timeout(30_000))).toBe('absent');
  });

  it('creates a PVC (dry run first) and deletes it by UID', async () => {
    const pvc = { metadata: { name: 'ws' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    await createPvc(client, fx.ns.name, pvc, { dryRun: true });
    expect(await getPvc(client, fx.ns.name, 'ws')).toBeUndefined();
    const created = await createPvc(client, fx.ns.name, pvc);
    const uid = created.metadata?.uid ?? '';
    expect(await deletePvc(client, fx.ns.name, 'ws', { uid }, AbortSignal.timeout(60_000))).toBe('deleted');
    expect(await getPvc(client, fx.ns.name, 'ws')).toBeUndefined();
  });

  it('reports Forbidden, naming the identity, outside its namespace', async () => {
    const err = await rejection(getPod(client, 'default', 'anything'));
    expect(isForbidden(err)).toBe(true);
    expect((err as KubeApiError).message).toMatch(/^get pod default\/anything: pods "anything" is forbidden: User "system:serviceaccount:/);
  });

  it('ends the wait for a deletion when the signal fires, saying what is still there', async () => {
    // A PVC in use by a Pod stays (kubernetes.io/pvc-protection) until the Pod is gone.
    const pvc = await createPvc(client, fx.ns.name, { metadata: { name: 'held' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    await createPod(
      client,
      fx.ns.name,
      restrictedPod({
        name: 'holder',
        image: env.busyboxImage,
        command: ['sleep', '3600'],
        volumes: [{ name: 'w', persistentVolumeClaim: { claimName: 'held' } }],
        volumeMounts: [{ name: 'w', mountPath: '/w' }],
      }),
    );
    await waitForPodRunning(fx.admin, fx.ns.name, 'holder');
    const err = await rejection(deletePvc(client, fx.ns.name, 'held', { uid: pvc.metadata?.uid ?? '' }, AbortSignal.timeout(2_000)));
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).reason).toBe('ClientTimeout');
    expect((err as Error).message).toBe(`delete pvc ${fx.ns.name}/held: still present (finalizers: kubernetes.io/pvc-protection) when the wait ended`);
  });
});
