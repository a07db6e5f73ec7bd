/**
 * The Helm chart deploy/helm/berth installed on the test cluster as a team would (`helm install`
 * with values), and what a test needs around it: the controller Pods, which one holds the
 * leader-election Lease, a Pod's own `/readyz` (a port-forward to that Pod), and the HTTP API
 * through `kubectl port-forward svc/<release>` with the chart's generated token.
 *
 * The test cluster has no kube-proxy, so the controller reaches the API server at the node's
 * address (KUBERNETES_SERVICE_HOST/PORT through the chart's `extraEnv`), as the chart's README says.
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CoordinationV1Api, CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { BerthClient } from '../../../src/api/api-client.js';
import { requireEnv } from './env.js';
import { forwardService, helm, kubectl, kubectlOk, type ServiceForward } from './helm.js';
import { forwardPort, type ForwardedPort } from './portforward.js';
import { podCondition, waitFor } from './wait.js';

const run = promisify(execFile);
const CHART = fileURLToPath(new URL('../../../deploy/helm/berth', import.meta.url));
/** The controller container's port (the chart's `http`). */
const CONTROLLER_PORT = 8080;

export interface ChartRelease {
  release: string;
  namespace: string;
  /** The objects' full name: the Deployment, Service and Lease (the release name when it contains "berth"). */
  fullname: string;
  /** The controller Pods, oldest first (terminating ones left out). */
  pods(): Promise<V1Pod[]>;
  /** The holder of the leader-election Lease, or undefined. */
  leaseHolder(): Promise<string | undefined>;
  /** The Lease's leaseTransitions (one per new term). */
  leaseTransitions(): Promise<number>;
  /** The API token from the chart's Secret. */
  token(): Promise<string>;
  /**
   * The leader-election lines (and errors) the controller Pods logged, each container's current and
   * previous run, oldest Pod first: what a failed takeover assertion prints to say what happened.
   */
  leaderLog(): Promise<string>;
  uninstall(): Promise<void>;
}

/** `host` and `port` of the API server in `kc` (the address Pods reach it on, without a Service). */
export function apiServerAddress(kc: KubeConfig): { host: string; port: string } {
  const server = kc.getCurrentCluster()?.server;
  if (server === undefined) throw new Error('the kubeconfig names no cluster server');
  const url = new URL(server);
  return { host: url.hostname, port: url.port || '443' };
}

/** `helm install RELEASE deploy/helm/berth -n NAMESPACE -f <values>`, not waiting for readiness (a standby never is). */
export async function installChart(kc: KubeConfig, release: string, namespace: string, values: object): Promise<ChartRelease> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-chart-values-'));
  try {
    writeFileSync(join(dir, 'values.yaml'), stringify(values));
    const r = await helm(['install', release, CHART, '--namespace', namespace, '--values', join(dir, 'values.yaml')]);
    if (r.code !== 0) throw new Error(`helm install failed (${r.code}):\n${r.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const fullname = release.includes('berth') ? release : `${release}-berth`;
  const core = kc.makeApiClient(CoreV1Api);
  const coordination = kc.makeApiClient(CoordinationV1Api);
  const selector = `app.kubernetes.io/instance=${release},app.kubernetes.io/component=controller`;
  const r: ChartRelease = {
    release,
    namespace,
    fullname,
    async pods() {
      const list = await core.listNamespacedPod({ namespace, labelSelector: selector });
      return list.items
        .filter((p) => p.metadata?.deletionTimestamp === undefined)
        .sort((a, b) => String(a.metadata?.creationTimestamp?.toISOString()).localeCompare(String(b.metadata?.creationTimestamp?.toISOString())));
    },
    async leaseHolder() {
      try {
        return (await coordination.readNamespacedLease({ name: fullname, namespace })).spec?.holderIdentity ?? undefined;
      } catch {
        return undefined;
      }
    },
    async leaseTransitions() {
      return (await coordination.readNamespacedLease({ name: fullname, namespace })).spec?.leaseTransitions ?? 0;
    },
    async token() {
      const secret = await core.readNamespacedSecret({ name: `${fullname}-api-token`, namespace });
      const data = secret.data?.token;
      if (data === undefined) throw new Error(`secret ${fullname}-api-token has no key "token"`);
      return Buffer.from(data, 'base64').toString('utf8');
    },
    async leaderLog() {
      const out: string[] = [];
      for (const pod of await r.pods()) {
        const name = pod.metadata!.name!;
        for (const previous of [true, false]) {
          const r = await kubectl(['-n', namespace, 'logs', name, '-c', 'berth', ...(previous ? ['--previous'] : [])], 30_000);
          if (r.code !== 0) continue;
          const lines = r.stdout.split('\n').filter((l) => /leader|Lease|fence|"level":(40|50|60)/.test(l));
          out.push(`--- ${name}${previous ? ' (previous run)' : ''}: ${lines.length} lines`, ...lines.slice(-40).map(brief));
        }
      }
      return out.join('\n');
    },
    async uninstall() {
      const u = await helm(['uninstall', release, '--namespace', namespace]);
      if (u.code !== 0) throw new Error(`helm uninstall failed (${u.code}):\n${u.stderr}`);
    },
  };
  return r;
}

/** One pino JSON line as `time level msg {rest}`; other lines as they are. */
function brief(line: string): string {
  try {
    const { time, level, msg, pid: _p, hostname: _h, ...rest } = JSON.parse(line) as Record<string, unknown>;
    return `${new Date(Number(time)).toISOString().slice(11, 23)} ${String(level)} ${String(msg)} ${JSON.stringify(rest)}`;
  } catch {
    return line;
  }
}

const ready = (p: V1Pod): boolean => podCondition(p, 'Ready')?.status === 'True';
const started = (p: V1Pod): boolean => (p.status?.containerStatuses ?? []).some((c) => c.state?.running !== undefined);

const LEADER_LABEL = 'berth.dev/leader';
const labelled = (p: V1Pod): boolean => p.metadata?.labels?.[LEADER_LABEL] === 'true';

/**
 * Waits until the Lease's holder is one of `count` running controller Pods, the only one labelled
 * `berth.dev/leader=true` (what the Service selects) and Ready; returns its name and the others'
 * (the standbys: Ready too, by `/readyz?standby=ok`, but without the label).
 */
export function waitForLeader(r: ChartRelease, count: number, timeoutMs = 180_000): Promise<{ leader: string; standbys: string[] }> {
  let last = '';
  return waitFor(
    `one Ready, labelled leader holding the Lease and ${count - 1} standby controller Pods`,
    async () => {
      const [pods, holder] = await Promise.all([r.pods(), r.leaseHolder()]);
      last = `holder ${holder ?? '-'}; ${pods.map((p) => `${p.metadata?.name}:${ready(p) ? 'Ready' : started(p) ? 'running' : p.status?.phase}${labelled(p) ? '+leader' : ''}`).join(', ')}`;
      if (holder === undefined || pods.length !== count || !pods.every(started)) return undefined;
      const leaders = pods.filter(labelled);
      if (leaders.length !== 1 || leaders[0]!.metadata?.name !== holder || !ready(leaders[0]!)) return undefined;
      return { leader: holder, standbys: pods.filter((p) => !labelled(p)).map((p) => p.metadata!.name!) };
    },
    { timeoutMs, intervalMs: 250 },
  ).catch((err: unknown) => {
    throw new Error(`${String(err)} (last seen: ${last})`);
  });
}

export interface PodProbe {
  pod: string;
  /** `GET /readyz` of that Pod: status and reason (status 0: no answer). */
  readyz(): Promise<{ status: number; reason?: string }>;
  close(): Promise<void>;
}

/** A port-forward to one controller Pod's port, for its own `/readyz`. */
export async function probePod(kc: KubeConfig, namespace: string, pod: string): Promise<PodProbe> {
  const fwd: ForwardedPort = await forwardPort(kc, namespace, pod, CONTROLLER_PORT);
  return {
    pod,
    async readyz() {
      try {
        const res = await fetch(`http://127.0.0.1:${fwd.port}/readyz`, { signal: AbortSignal.timeout(3000) });
        const body = (await res.json().catch(() => ({}))) as { reason?: string };
        return { status: res.status, ...(body.reason !== undefined ? { reason: body.reason } : {}) };
      } catch {
        return { status: 0 };
      }
    },
    close: () => fwd.close(),
  };
}

/** Polls the probe until `want` holds; resolves with the time it first held (performance.now()). */
export async function untilReadyz(p: PodProbe, want: (s: { status: number; reason?: string }) => boolean, what: string, timeoutMs = 120_000): Promise<number> {
  let last: { status: number; reason?: string } = { status: 0 };
  return waitFor(
    `${p.pod} ${what}`,
    async () => {
      last = await p.readyz();
      return want(last) ? performance.now() : undefined;
    },
    { timeoutMs, intervalMs: 100 },
  ).catch((err: unknown) => {
    throw new Error(`${String(err)} (last /readyz ${JSON.stringify(last)})`);
  });
}

/**
 * Polls the Lease until a term later than `transitions` has begun and its holder's own `/readyz`
 * answers 200 (the holder may be any controller Pod: the standby, a replacement, or a restarted
 * container); resolves with that time (performance.now()) and the Pod.
 */
export async function untilNewLeaderReady(kc: KubeConfig, r: ChartRelease, transitions: number, timeoutMs = 120_000): Promise<{ at: number; pod: string }> {
  const probes = new Map<string, PodProbe>();
  let last = '';
  try {
    return await waitFor(
      `a new leader of ${r.fullname} answering /readyz 200`,
      async () => {
        const [holder, term] = await Promise.all([r.leaseHolder(), r.leaseTransitions().catch(() => transitions)]);
        last = `holder ${holder ?? '-'}, term ${term}`;
        if (holder === undefined || holder === '' || term <= transitions) return undefined;
        let probe = probes.get(holder);
        if (probe === undefined) probes.set(holder, (probe = await probePod(kc, r.namespace, holder)));
        const s = await probe.readyz();
        last += `, its /readyz ${JSON.stringify(s)}`;
        return s.status === 200 ? { at: performance.now(), pod: holder } : undefined;
      },
      { timeoutMs, intervalMs: 100 },
    );
  } catch (err) {
    throw new Error(`${String(err)} (last: ${last})`);
  } finally {
    for (const p of probes.values()) await p.close();
  }
}

/**
 * `kubectl delete pod NAME --grace-period=0 --force`. The API object goes at once; the kubelet
 * still stops the container with SIGTERM first, so `berth serve` shuts down and releases its Lease.
 */
export async function forceDeletePod(namespace: string, pod: string): Promise<void> {
  await kubectlOk(['-n', namespace, 'delete', 'pod', pod, '--grace-period=0', '--force', '--wait=false']);
}

/**
 * SIGKILL to the Pod's `berth` container process, on the host (the test cluster's containerd runs
 * here: `ctr task ls` names the container's host PID): no shutdown, no Lease release; the kubelet
 * restarts the container in the same Pod.
 */
export async function killContainer(pod: V1Pod): Promise<void> {
  const id = pod.status?.containerStatuses?.find((c) => c.name === 'berth')?.containerID?.replace(/^containerd:\/\//, '');
  if (id === undefined) throw new Error(`pod ${pod.metadata?.name}: no berth container id`);
  const { stdout } = await run('ctr', ['--address', requireEnv('BERTH_TEST_CONTAINERD_SOCK'), '-n', 'k8s.io', 'task', 'ls']);
  const line = stdout.split('\n').find((l) => l.split(/\s+/)[0] === id);
  const pid = Number(line?.split(/\s+/)[1]);
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`pod ${pod.metadata?.name}: container ${id} has no running task`);
  process.kill(pid, 'SIGKILL');
}

export interface ServiceApi {
  client: BerthClient;
  close(): Promise<void>;
}

/** The API through `kubectl port-forward svc/<fullname>` (to one Ready Pod, chosen by kubectl when it starts). */
export async function serviceApi(r: ChartRelease, token: string, servicePort = 80): Promise<ServiceApi> {
  const fwd: ServiceForward = await forwardService(r.namespace, r.fullname, servicePort);
  return { client: new BerthClient({ baseUrl: `http://127.0.0.1:${fwd.port}`, token, timeoutMs: 60_000 }), close: () => fwd.close() };
}
