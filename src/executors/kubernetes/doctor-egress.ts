/**
 * `berth doctor --egress PROFILE` (issue 23): proof that a profile's egress policy is enforced on
 * this cluster, not hope. A disposable Pod is made exactly as a session's (the profile's template,
 * an emptyDir workspace, Berth's labels) under the policy a session of the profile gets; from inside
 * it, direct connections are tried to what the policy must block (the API server — which every Pod
 * reaches on a cluster that does not enforce policies, so it tells enforcement apart — and the
 * metadata address) and to the egress proxy it must let through. A blocked probe that connects means
 * the cluster's network plugin ignores NetworkPolicy: "NetworkPolicy is not enforced on this
 * cluster". The Pod and the policy are deleted (by UID) whatever happens.
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import type { EgressProxyTarget, NetworkSettings } from '../network.js';
import { usesEgressProxy } from '../network.js';
import { composeNetworkPolicy, createNonce, resourceNames } from './compose/index.js';
import { createKubeClient, kubePorts, type KubePorts } from './kube/index.js';
import { desiredPod } from './launch/desired.js';
import type { KubernetesConnection, KubernetesProfile } from './types.js';

interface EgressDoctorInput {
  executor: string;
  connection: KubernetesConnection;
  profileName: string;
  profile: KubernetesProfile;
  network: NetworkSettings;
  proxy: EgressProxyTarget | null;
  installationId: string | null;
  env?: NodeJS.ProcessEnv;
  /** The cluster (tests); default: from `connection`. */
  kube?: KubePorts;
  /** Progress lines (`starting a probe Pod…`). */
  onProgress?: (line: string) => void;
}

interface EgressProbe {
  name: string;
  target: string;
  expect: 'blocked' | 'reachable';
  /** What the connection did: connected, was refused by the host (its packets got through), or got nowhere. */
  result: 'reachable' | 'refused' | 'blocked' | 'unknown';
  detail: string;
}

interface EgressDoctorReport {
  verdict: 'enforced' | 'not_enforced' | 'proxy_unreachable' | 'inconclusive';
  message: string;
  probes: EgressProbe[];
}

/** How long a probe that should be blocked may keep connecting (an enforcer learns a new Pod's address a moment after it starts). */
const ENFORCEMENT_GRACE_MS = 30_000;
const POD_READY_TIMEOUT_MS = 120_000;

/** Tries a TCP connection from inside the Pod: node if the image has it, else bash's /dev/tcp. */
const PROBE_SCRIPT = `h=$1; p=$2
if command -v node >/dev/null 2>&1; then exec node -e "const s=require('net').connect({host:process.argv[1],port:+process.argv[2]});s.setTimeout(3000);s.on('connect',()=>{console.log('reachable');s.destroy()});s.on('timeout',()=>{console.log('blocked timeout');s.destroy()});s.on('error',e=>console.log((e.code==='ECONNREFUSED'?'refused ':'blocked ')+e.code))" "$h" "$p"; fi
if command -v bash >/dev/null 2>&1; then if timeout 3 bash -c "exec 3<>/dev/tcp/$h/$p" 2>/dev/null; then echo reachable; else echo blocked; fi; exit 0; fi
echo unknown no node or bash in the image to probe with`;

export async function egressDoctor(input: EgressDoctorInput): Promise<EgressDoctorReport> {
  const kube = input.kube ?? kubePorts(createKubeClient(input.connection, { ...(input.env ? { env: input.env } : {}) }));
  const namespace = input.connection.namespace;
  const instanceId = `doctor-egress-${randomBytes(6).toString('hex')}`;
  const identity = { instanceId, sessionId: instanceId, executor: input.executor, profile: input.profileName };
  const name = resourceNames(instanceId).pod;
  const random = (n: number): Uint8Array => randomBytes(n);
  const progress = input.onProgress ?? (() => undefined);
  const apiServer = await kube.policies.apiServerAddresses();
  const policy = composeNetworkPolicy({ identity, namespace, name, settings: input.network, proxy: input.proxy, apiServerAddresses: apiServer, createNonce: createNonce(random), installationId: input.installationId });
  const profile: KubernetesProfile = { ...input.profile, workspace: { mode: 'empty_dir', size: null, storageClass: null, accessModes: [], claimName: null } };
  const pod = desiredPod({ profile, identity, namespace, random, installationId: input.installationId }, name, null);
  progress(`creating NetworkPolicy and probe Pod ${namespace}/${name}`);
  const createdPolicy = await kube.policies.create(namespace, policy);
  let createdPod: V1Pod | null = null;
  try {
    createdPod = await kube.objects.createPod(namespace, pod);
    await waitRunning(kube, namespace, name, input.profile.mainContainer);
    progress('probing from inside the Pod');
    const probes = await runProbes(kube, { namespace, pod: name, container: input.profile.mainContainer }, probePlan(input, apiServer));
    return verdictOf(probes);
  } finally {
    progress('deleting the probe Pod and its policy');
    const signal = AbortSignal.timeout(60_000);
    if (createdPod?.metadata?.uid) await kube.objects.deletePod(namespace, name, { uid: createdPod.metadata.uid }, signal).catch(() => undefined);
    if (createdPolicy.metadata?.uid) await kube.policies.delete(namespace, name, { uid: createdPolicy.metadata.uid }, signal).catch(() => undefined);
  }
}

interface PlannedProbe {
  name: string;
  host: string;
  port: number;
  expect: 'blocked' | 'reachable';
}

function probePlan(input: EgressDoctorInput, apiServer: readonly string[]): PlannedProbe[] {
  const n = input.network;
  const plan: PlannedProbe[] = [];
  const server = new URL(createKubeServerUrl(input));
  const apiPort = Number(server.port || 443);
  const apiHost = apiServer[0] ?? server.hostname.replace(/^\[|\]$/g, '');
  if (!(n.egress === 'open' && n.allowClusterApi)) plan.push({ name: 'API server', host: apiHost, port: apiPort, expect: 'blocked' });
  if (!(n.egress === 'open' && n.allowMetadata)) plan.push({ name: 'metadata address', host: '169.254.169.254', port: 80, expect: 'blocked' });
  if (usesEgressProxy(n) && input.proxy !== null) {
    const proxy = new URL(input.proxy.url);
    plan.push({ name: 'egress proxy', host: proxy.hostname.replace(/^\[|\]$/g, ''), port: Number(proxy.port), expect: 'reachable' });
  }
  return plan;
}

/** The API server URL the executor's client uses (for the API server probe's port). */
function createKubeServerUrl(input: EgressDoctorInput): string {
  try {
    return createKubeClient(input.connection, { ...(input.env ? { env: input.env } : {}) }).server;
  } catch {
    return 'https://127.0.0.1:443';
  }
}

async function waitRunning(kube: KubePorts, namespace: string, name: string, container: string): Promise<void> {
  const deadline = Date.now() + POD_READY_TIMEOUT_MS;
  for (;;) {
    const pod = await kube.objects.getPod(namespace, name);
    const status = pod?.status?.containerStatuses?.find((c) => c.name === container);
    if (status?.state?.running) return;
    const waiting = status?.state?.waiting;
    if (pod?.status?.phase === 'Failed' || (waiting?.reason !== undefined && /BackOff|Err|Invalid/.test(waiting.reason))) {
      throw new Error(`the probe Pod ${namespace}/${name} did not start (${waiting?.reason ?? pod?.status?.phase ?? '?'}: ${waiting?.message ?? ''}); run berth doctor --executor ${name} for the template's checks`);
    }
    if (Date.now() > deadline) throw new Error(`the probe Pod ${namespace}/${name} was not running within ${POD_READY_TIMEOUT_MS / 1000} s (see kubectl describe pod)`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function runProbes(kube: KubePorts, where: { namespace: string; pod: string; container: string }, plan: readonly PlannedProbe[]): Promise<EgressProbe[]> {
  const once = async (p: PlannedProbe): Promise<EgressProbe> => {
    const r = await kube.exec.exec({ ...where, command: ['sh', '-c', PROBE_SCRIPT, 'probe', p.host, String(p.port)], signal: AbortSignal.timeout(20_000) });
    const line = r.stdout.trim().split('\n').pop() ?? '';
    const [word = 'unknown', ...rest] = line.split(' ');
    const result = (['reachable', 'refused', 'blocked'] as const).find((w) => w === word) ?? 'unknown';
    return { name: p.name, target: `${p.host}:${p.port}`, expect: p.expect, result, detail: rest.join(' ') || r.stderr.trim().slice(0, 200) };
  };
  const out: EgressProbe[] = [];
  for (const p of plan) {
    let probe = await once(p);
    const deadline = Date.now() + ENFORCEMENT_GRACE_MS;
    // a blocked probe that still connects is tried again until the grace is over
    while (p.expect === 'blocked' && (probe.result === 'reachable' || probe.result === 'refused') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000));
      probe = await once(p);
    }
    out.push(probe);
  }
  return out;
}

/** The verdict of the probes (pure). */
export function verdictOf(probes: EgressProbe[]): EgressDoctorReport {
  const leaked = probes.filter((p) => p.expect === 'blocked' && (p.result === 'reachable' || p.result === 'refused'));
  if (leaked.length > 0) {
    return {
      verdict: 'not_enforced',
      message: `NetworkPolicy is not enforced on this cluster: from a Pod under the profile's policy, ${leaked.map((p) => `the ${p.name} (${p.target})`).join(' and ')} answered. Use a network plugin that enforces NetworkPolicy (Calico, Cilium, kube-network-policies …); until then the policy is only a declaration`,
      probes,
    };
  }
  const unknown = probes.filter((p) => p.result === 'unknown');
  if (unknown.length > 0) return { verdict: 'inconclusive', message: `the probes could not run in the profile's image (${unknown[0]?.detail ?? ''}): it needs node or bash`, probes };
  const proxy = probes.find((p) => p.expect === 'reachable' && p.result !== 'reachable');
  if (proxy !== undefined) {
    return { verdict: 'proxy_unreachable', message: `NetworkPolicy is enforced, but the egress proxy ${proxy.target} is unreachable from the Pod (is berth serve's egress.listen running there, and does egress_proxy point at it?)`, probes };
  }
  return { verdict: 'enforced', message: 'NetworkPolicy is enforced: what the policy blocks is unreachable from a Pod under it, and what it allows answers', probes };
}
