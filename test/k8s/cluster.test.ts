// What Berth relies on from a real Kubernetes cluster, checked against the test
// cluster (test/cluster): real kube-apiserver, scheduler, controller-manager,
// kubelet and containerd, through @kubernetes/client-node.
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api, KubeConfig, StorageV1Api, Watch } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import {
  assertClusterReachable,
  clusterEnv,
  createTestNamespace,
  createTestRepo,
  execInPod,
  expectApiFailure,
  forwardPort,
  loadKubeConfig,
  podCondition,
  podSummary,
  restrictedPod,
  waitFor,
  waitForPod,
  waitForPodGone,
  waitForPodRunning,
} from './support/index.js';
import type { ClusterEnv, TestNamespace, TestRepo } from './support/index.js';

const PVC = 'workspace';
const HTTP_PORT = 8080;
// A tiny HTTP server, the agent pod's main process (port-forward target).
const SERVER = `require('http').createServer((q, s) => s.end('hello from ' + require('os').hostname() + ' ' + q.url)).listen(${HTTP_PORT})`;

function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path, agent: false, timeout: 20_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path} via port-forward timed out`)));
    req.on('error', reject);
  });
}

function agentPod(env: ClusterEnv, name: string): V1Pod {
  return restrictedPod({
    name,
    image: env.agentImage,
    command: ['node', '-e', SERVER],
    ports: [HTTP_PORT],
    volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName: PVC } }],
    volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
    workingDir: '/workspace',
  });
}

// Read at load time: without a cluster environment this file fails outright
// (never skips).
const env: ClusterEnv = clusterEnv();

describe('test cluster', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let ns: TestNamespace;
  let repo: TestRepo | undefined;

  beforeAll(async () => {
    kc = loadKubeConfig(env.kubeconfig);
    await assertClusterReachable(kc);
    core = kc.makeApiClient(CoreV1Api);
    ns = await createTestNamespace(kc, 'cluster', { podSecurity: 'restricted' });
  });

  afterAll(async () => {
    await repo?.remove();
    await ns?.cleanup();
  });

  it('creates a namespace that enforces Pod Security "restricted"', async () => {
    const namespace = await core.readNamespace({ name: ns.name });
    expect(namespace.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');

    // A root pod without the restricted settings is refused by the PodSecurity admission plugin.
    const failure = await expectApiFailure(403, () =>
      core.createNamespacedPod({
        namespace: ns.name,
        body: { metadata: { name: 'root-pod' }, spec: { containers: [{ name: 'c', image: env.busyboxImage, command: ['true'] }] } },
      }),
    );
    expect(failure.reason).toBe('Forbidden');
    expect(failure.message).toContain('violates PodSecurity "restricted');
  });

  it('enforces RBAC: a ServiceAccount without bindings cannot list pods', async () => {
    await core.createNamespacedServiceAccount({ namespace: ns.name, body: { metadata: { name: 'no-rights' } } });
    const token = await core.createNamespacedServiceAccountToken({
      name: 'no-rights',
      namespace: ns.name,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const cluster = kc.getCurrentCluster();
    if (!cluster || !token.status?.token) throw new Error('no cluster or token');
    const saKc = new KubeConfig();
    saKc.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'no-rights', token: token.status.token }],
      contexts: [{ name: 'sa', cluster: cluster.name, user: 'no-rights' }],
      currentContext: 'sa',
    });
    const failure = await expectApiFailure(403, () => saKc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: ns.name }));
    expect(failure.message).toContain('system:serviceaccount:' + ns.name + ':no-rights');
  });

  it('binds a PVC through the default StorageClass', async () => {
    const classes = await kc.makeApiClient(StorageV1Api).listStorageClass();
    const defaults = classes.items.filter((c) => c.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true');
    expect(defaults.map((c) => c.provisioner)).toEqual(['kubernetes.io/host-path']);

    await core.createNamespacedPersistentVolumeClaim({
      namespace: ns.name,
      body: {
        metadata: { name: PVC },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    const bound = await waitFor(
      `PVC ${PVC} to be Bound`,
      async () => {
        const pvc = await core.readNamespacedPersistentVolumeClaim({ name: PVC, namespace: ns.name });
        return pvc.status?.phase === 'Bound' ? pvc : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(bound.spec?.storageClassName).toBe(defaults[0]?.metadata?.name);
    expect(bound.spec?.volumeName).toBeTruthy();
  });

  it('runs a pod from the agent image (scheduled, not pinned) to Running', async () => {
    const started = performance.now();
    await core.createNamespacedPod({ namespace: ns.name, body: agentPod(env, 'agent') });
    const pod = await waitForPodRunning(kc, ns.name, 'agent');
    const elapsed = performance.now() - started;
    console.log(`[k8s-timing] pod create -> container running (agent image, PVC): ${elapsed.toFixed(0)} ms`);

    expect(pod.spec?.nodeName).toBeTruthy(); // set by the scheduler
    expect(podCondition(pod, 'PodScheduled')?.status).toBe('True');
    expect(pod.status?.phase).toBe('Running');
    expect(pod.status?.podIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });

  it('execs with stdin, stdout, stderr and the exit code', async () => {
    const failing = await execInPod(kc, {
      namespace: ns.name,
      pod: 'agent',
      command: ['sh', '-c', 'tr a-z A-Z; echo "to stderr" >&2; exit 3'],
      stdin: 'hello through stdin\n',
    });
    expect(failing).toMatchObject({ stdout: 'HELLO THROUGH STDIN\n', stderr: 'to stderr\n', exitCode: 3 });

    const ok = await execInPod(kc, {
      namespace: ns.name,
      pod: 'agent',
      command: ['sh', '-c', 'node --version; git --version; tar --version | head -n1; id -u'],
    });
    expect(ok.exitCode).toBe(0);
    expect(ok.stderr).toBe('');
    const [node, git, tar, uid] = ok.stdout.trim().split('\n');
    expect(node).toMatch(/^v20\./);
    expect(git).toMatch(/^git version /);
    expect(tar).toMatch(/GNU tar/);
    expect(uid).toBe('1000');
  });

  it('clones from the cluster git server into the writable workspace', async () => {
    repo = await createTestRepo('cluster-test', { 'README.md': '# test repo\n', 'src/a.txt': 'alpha\n' });
    const result = await execInPod(kc, {
      namespace: ns.name,
      pod: 'agent',
      command: ['sh', '-c', `git clone --quiet ${repo.url} /workspace/repo && git -C /workspace/repo rev-parse HEAD && cat /workspace/repo/src/a.txt && echo kept > /workspace/marker`],
    });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`${repo.commit}\nalpha\n`);
  });

  it('port-forwards an HTTP round trip over WebSocket', async () => {
    const forward = await forwardPort(kc, ns.name, 'agent', HTTP_PORT);
    try {
      // Two requests, two TCP connections, two WebSockets.
      const first = await httpGet(forward.port, '/ping');
      const second = await httpGet(forward.port, '/again');
      expect(first).toEqual({ status: 200, body: 'hello from agent /ping' });
      expect(second).toEqual({ status: 200, body: 'hello from agent /again' });
      expect(forward.errors).toEqual([]);
    } finally {
      await forward.close();
    }
  });

  it('keeps the PVC contents across pod replacement', async () => {
    await core.deleteNamespacedPod({ name: 'agent', namespace: ns.name, gracePeriodSeconds: 0 });
    await waitForPodGone(kc, ns.name, 'agent');
    await core.createNamespacedPod({ namespace: ns.name, body: agentPod(env, 'agent-2') });
    await waitForPodRunning(kc, ns.name, 'agent-2');
    const result = await execInPod(kc, {
      namespace: ns.name,
      pod: 'agent-2',
      command: ['sh', '-c', 'cat /workspace/marker && git -C /workspace/repo rev-parse HEAD'],
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`kept\n${repo?.commit}\n`);
  });

  it("sees the pod's phases through a watch", async () => {
    const name = 'phases';
    const phases: string[] = [];
    let watchEnd: unknown;
    const events: string[] = [];
    let resolveDone: () => void = () => undefined;
    const succeeded = new Promise<void>((resolve) => (resolveDone = resolve));
    const controller = await new Watch(kc).watch(
      `/api/v1/namespaces/${ns.name}/pods`,
      { fieldSelector: `metadata.name=${name}` },
      (type: string, obj: unknown) => {
        const phase = (obj as V1Pod).status?.phase;
        events.push(`${type}:${phase ?? JSON.stringify(obj)}`);
        if (type === 'ERROR' || !phase) return;
        if (phases[phases.length - 1] !== phase) phases.push(phase);
        if (phase === 'Succeeded' || phase === 'Failed') resolveDone();
      },
      (err: unknown) => {
        watchEnd = err;
        resolveDone();
      },
    );
    try {
      const started = performance.now();
      await core.createNamespacedPod({
        namespace: ns.name,
        body: restrictedPod({ name, image: env.busyboxImage, command: ['sh', '-c', 'sleep 3'], restartPolicy: 'Never' }),
      });
      const running = await waitForPodRunning(kc, ns.name, name);
      console.log(`[k8s-timing] pod create -> container running (busybox): ${(performance.now() - started).toFixed(0)} ms`);
      expect(running.status?.phase).toBe('Running');
      await Promise.race([
        succeeded,
        new Promise((_, reject) => setTimeout(() => reject(new Error(`watch saw only ${phases.join(' -> ')}`)), 60_000)),
      ]);
    } finally {
      controller.abort();
    }
    expect(phases, `watch ended: ${String(watchEnd)}; events: ${events.join(', ')}`).toEqual(['Pending', 'Running', 'Succeeded']);
  });

  it('deletes with a UID precondition and refuses a wrong UID with 409', async () => {
    const name = 'precondition';
    const created = await core.createNamespacedPod({
      namespace: ns.name,
      body: restrictedPod({ name, image: env.busyboxImage, command: ['sleep', '3600'] }),
    });
    const uid = created.metadata?.uid;
    expect(uid).toBeTruthy();

    const failure = await expectApiFailure(409, () =>
      core.deleteNamespacedPod({
        name,
        namespace: ns.name,
        body: { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } },
      }),
    );
    expect(failure.reason).toBe('Conflict');
    expect(failure.message).toContain('the UID in the precondition');
    expect((await core.readNamespacedPod({ name, namespace: ns.name })).metadata?.uid).toBe(uid);

    await core.deleteNamespacedPod({ name, namespace: ns.name, gracePeriodSeconds: 0, body: { preconditions: { uid } } });
    await waitForPodGone(kc, ns.name, name);
  });

  it('reports ErrImagePull / ImagePullBackOff for an image that does not exist', async () => {
    const name = 'no-image';
    await core.createNamespacedPod({
      namespace: ns.name,
      body: restrictedPod({ name, image: 'localhost/berth/does-not-exist:0.0.1', command: ['true'] }),
    });
    const pod = await waitForPod(
      kc,
      ns.name,
      name,
      (p) => ['ErrImagePull', 'ImagePullBackOff'].includes(p.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? ''),
      { timeoutMs: 90_000, description: 'ErrImagePull or ImagePullBackOff' },
    );
    expect(pod.status?.phase).toBe('Pending');
    expect(podCondition(pod, 'PodScheduled')?.status).toBe('True');
  });

  it('reports PodScheduled=False for a pod no node can take', async () => {
    const name = 'unschedulable';
    await core.createNamespacedPod({
      namespace: ns.name,
      body: { ...restrictedPod({ name, image: env.busyboxImage, command: ['true'], nodeSelector: { 'berth.dev/no-such-node': 'true' } }) },
    });
    const pod = await waitForPod(kc, ns.name, name, (p) => podCondition(p, 'PodScheduled')?.status === 'False', {
      timeoutMs: 60_000,
      description: 'PodScheduled=False',
    });
    const condition = podCondition(pod, 'PodScheduled');
    expect(condition?.reason, podSummary(pod)).toBe('Unschedulable');
    expect(condition?.message).toMatch(/node\(s\) didn't match Pod's node affinity\/selector/);
    expect(pod.spec?.nodeName).toBeUndefined();
  });
});
