// NetworkPolicy is enforced by the test cluster (test/cluster: `kube netpol`, the controller of
// sigs.k8s.io/kube-network-policies beside the bridge CNI), as Berth's egress policies need:
// a client Pod reaches a server Pod until an egress deny-all selects the client; an egress rule
// for the server's port lets it through again; an ingress deny on the server blocks it; and the
// API server's port-forward (how Berth reaches agentctl) still connects to a Pod under deny-all.
// A denied connection is dropped, not refused: the client only sees its own timeout, so every
// probe here uses `nc -w 2`.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1NetworkPolicy, V1NetworkPolicySpec } from '@kubernetes/client-node';
import {
  assertClusterReachable,
  clusterEnv,
  createTestNamespace,
  execInPod,
  forwardPort,
  isNotFound,
  loadKubeConfig,
  requireEnv,
  restrictedPod,
  waitFor,
  waitForPodRunning,
} from './support/index.js';
import type { ExecResult, TestNamespace } from './support/index.js';

const env = clusterEnv();
const HOST_IP = requireEnv('BERTH_TEST_HOST_IP');
const GIT_PORT = Number(new URL(requireEnv('BERTH_TEST_GIT_BASE')).port || 9418);
const PORT = 8080;
const GREETING = 'hi';
// How long a policy change may take to reach the enforcer (informer event, then its next verdict).
const ENFORCED_WITHIN_MS = 30_000;
const HINT = 'is the enforcer running? `bash test/cluster/cluster.sh netpol status`';

/** Connects to 127.0.0.1:port and resolves with the first line the other end sends. */
function greetingThrough(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let text = '';
    socket.setEncoding('utf8');
    socket.setTimeout(20_000, () => socket.destroy(new Error(`no greeting through 127.0.0.1:${port} within 20 s (got ${JSON.stringify(text)})`)));
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n')) {
        socket.destroy();
        resolve(text.trim());
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`connection closed before a greeting (got ${JSON.stringify(text)})`)));
  });
}

/** What `nc -w 2` in the client Pod saw: the greeting, or nothing within 2 s. */
interface Probe {
  reached: boolean;
  result: ExecResult;
}

describe('NetworkPolicy enforcement (test cluster)', () => {
  let kc: KubeConfig;
  let net: NetworkingV1Api;
  let ns: TestNamespace;
  let serverIP: string;

  beforeAll(async () => {
    kc = loadKubeConfig(env.kubeconfig);
    await assertClusterReachable(kc);
    net = kc.makeApiClient(NetworkingV1Api);
    ns = await createTestNamespace(kc, 'netpol', { podSecurity: 'restricted' });
    const core = kc.makeApiClient(CoreV1Api);
    // busybox nc: -ll keeps listening, -e answers every connection with the greeting.
    const server = restrictedPod({ name: 'server', image: env.busyboxImage, command: ['nc', '-ll', '-p', String(PORT), '-e', 'echo', GREETING], ports: [PORT] });
    const client = restrictedPod({ name: 'client', image: env.busyboxImage, command: ['sleep', '3600'] });
    await Promise.all([core.createNamespacedPod({ namespace: ns.name, body: server }), core.createNamespacedPod({ namespace: ns.name, body: client })]);
    const [running] = await Promise.all([waitForPodRunning(kc, ns.name, 'server'), waitForPodRunning(kc, ns.name, 'client')]);
    serverIP = running.status?.podIP ?? '';
    expect(serverIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });

  afterAll(async () => {
    await ns?.cleanup();
  });

  async function probe(host: string, port: number): Promise<Probe> {
    const result = await execInPod(kc, { namespace: ns.name, pod: 'client', command: ['nc', '-w', '2', host, String(port)], timeoutMs: 20_000 });
    return { reached: result.exitCode === 0, result };
  }

  async function reachServer(): Promise<Probe> {
    const p = await probe(serverIP, PORT);
    return { ...p, reached: p.reached && p.result.stdout.trim() === GREETING };
  }

  /** Probes until the server is (not) reached, then returns that probe. */
  async function waitUntilServer(reached: boolean, why: string): Promise<Probe> {
    return waitFor(`client ${reached ? 'reaching' : 'blocked from'} the server (${why}; ${HINT})`, async () => {
      const p = await reachServer();
      return p.reached === reached ? p : undefined;
    }, { timeoutMs: ENFORCED_WITHIN_MS, intervalMs: 200 });
  }

  async function applyPolicy(name: string, spec: V1NetworkPolicySpec): Promise<void> {
    const body: V1NetworkPolicy = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name }, spec };
    await net.createNamespacedNetworkPolicy({ namespace: ns.name, body });
  }

  async function deletePolicy(name: string): Promise<void> {
    try {
      await net.deleteNamespacedNetworkPolicy({ namespace: ns.name, name });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  it('lets the client reach the server while no policy selects either', async () => {
    const p = await reachServer();
    expect(p.result.stderr).toBe('');
    expect(p.reached).toBe(true);
  });

  it('drops every new connection of a Pod under an egress deny-all, the node\'s own addresses included', async () => {
    await applyPolicy('client-deny-egress', { podSelector: { matchLabels: { app: 'client' } }, policyTypes: ['Egress'] });
    const blocked = await waitUntilServer(false, 'egress deny-all on the client');
    // Dropped, not refused: nc gives up after its own 2 s.
    expect(blocked.result.stdout).toBe('');
    expect(blocked.result.stderr).toContain('timed out');
    // The git daemon on the node's bridge address: egress policy applies to the node as well.
    const git = await probe(HOST_IP, GIT_PORT);
    expect(git.reached).toBe(false);
    expect(git.result.stderr).toContain('timed out');
  });

  it('lets the client through again with an egress rule for the server\'s Pod and port', async () => {
    await applyPolicy('client-allow-server', {
      podSelector: { matchLabels: { app: 'client' } },
      policyTypes: ['Egress'],
      egress: [{ to: [{ podSelector: { matchLabels: { app: 'server' } } }], ports: [{ protocol: 'TCP', port: PORT }] }],
    });
    const p = await waitUntilServer(true, 'egress allowed to server:8080');
    expect(p.result.stdout.trim()).toBe(GREETING);
    // Everything else stays denied.
    expect((await probe(HOST_IP, GIT_PORT)).reached).toBe(false);
  });

  it('blocks the client with an ingress deny on the server, once the client may send again', async () => {
    await deletePolicy('client-allow-server');
    await deletePolicy('client-deny-egress');
    await waitUntilServer(true, 'client policies deleted');
    await applyPolicy('server-deny-ingress', { podSelector: { matchLabels: { app: 'server' } }, policyTypes: ['Ingress'] });
    const blocked = await waitUntilServer(false, 'ingress deny-all on the server');
    expect(blocked.result.stderr).toContain('timed out');
  });

  it('still port-forwards to a Pod under deny-all ingress and egress (the forward dials inside the Pod)', async () => {
    await deletePolicy('server-deny-ingress');
    await applyPolicy('server-deny-all', { podSelector: { matchLabels: { app: 'server' } }, policyTypes: ['Ingress', 'Egress'] });
    await waitUntilServer(false, 'deny-all on the server');
    const forward = await forwardPort(kc, ns.name, 'server', PORT);
    try {
      // Two connections, two port-forward streams.
      expect(await greetingThrough(forward.port)).toBe(GREETING);
      expect(await greetingThrough(forward.port)).toBe(GREETING);
      expect(forward.errors).toEqual([]);
    } finally {
      await forward.close();
    }
  });
});
