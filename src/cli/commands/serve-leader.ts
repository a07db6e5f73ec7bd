/**
 * `berth serve --lease NAME`: leader election between the replicas of one controller (the Helm
 * chart's Postgres store runs two). Read and checked here; the election itself is in
 * server/leadership.ts. The Lease lives in the controller's own namespace; the identity is the
 * Pod's name (POD_NAME from the downward API), else the host name.
 * @module
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { ResolvedConfig } from '../../config/index.js';
import type { LeaderSettings } from '../../server/leadership.js';
import { UsageError } from '../exit-codes.js';

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** What the flag and the environment say (no I/O but reading the service account's namespace). */
interface LeaseRequest {
  name: string;
  namespace: string;
  identity: string;
  /** The Pod serve runs in (POD_NAME, inside a cluster): the leader labels it for the Service. Null on a host. */
  pod: string | null;
  timings: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number } | null;
}

/** The Lease serve competes for, or null without `--lease` / `$BERTH_LEASE`. Throws UsageError naming the flag. */
export function leaseRequest(flag: string | undefined, env: NodeJS.ProcessEnv, config: ResolvedConfig): LeaseRequest | null {
  const name = flag ?? (env.BERTH_LEASE === '' ? undefined : env.BERTH_LEASE);
  if (name === undefined) return null;
  if (!DNS_SUBDOMAIN.test(name)) throw new UsageError(`serve: --lease ${JSON.stringify(name)}: must be a Kubernetes object name (lower-case letters, digits, '-' and '.')`, 'serve');
  if (config.store.backend !== 'postgres') {
    throw new UsageError('serve: --lease needs store.backend: postgres in berth.yaml (the replicas must share one inventory); with the sqlite store run a single replica without --lease', 'serve');
  }
  const namespace = env.POD_NAMESPACE || readServiceAccountNamespace();
  if (namespace === undefined || !DNS_LABEL.test(namespace)) {
    throw new UsageError('serve: --lease: set POD_NAMESPACE to the namespace the Lease lives in (the chart sets it from the downward API)', 'serve');
  }
  const identity = env.POD_NAME || hostname();
  const inPod = env.POD_NAME !== undefined && env.POD_NAME !== '' && readServiceAccountNamespace() !== undefined;
  return { name, namespace, identity, pod: inPod ? identity : null, timings: parseTimings(env.BERTH_LEASE_TIMINGS) };
}

/** The elector's settings for `req`, with a Lease port over the cluster's API (in-cluster credentials, or the kubeconfig). */
export async function leaderSettings(req: LeaseRequest): Promise<LeaderSettings> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const { kubeLeasePort } = await import('../../server/leader/kube-lease-port.js');
  const { podLeaderLabel } = await import('../../server/leader/pod-label.js');
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return {
    port: kubeLeasePort(kc, { namespace: req.namespace, name: req.name }),
    identity: req.identity,
    leaseName: req.name,
    namespace: req.namespace,
    ...(req.pod !== null ? { markLeader: podLeaderLabel(kc, { namespace: req.namespace, pod: req.pod }) } : {}),
    ...(req.timings ?? {}),
  };
}

function readServiceAccountNamespace(): string | undefined {
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** `$BERTH_LEASE_TIMINGS`: `LEASE,RENEW,RETRY` in milliseconds (tests; the defaults are 15000,10000,2000). */
function parseTimings(text: string | undefined): LeaseRequest['timings'] {
  if (text === undefined || text === '') return null;
  const parts = text.split(',').map((p) => Number(p.trim()));
  if (parts.length !== 3 || parts.some((n) => !Number.isInteger(n) || n <= 0)) {
    throw new UsageError(`serve: BERTH_LEASE_TIMINGS=${JSON.stringify(text)}: must be LEASE,RENEW,RETRY in milliseconds (e.g. 15000,10000,2000)`, 'serve');
  }
  const [leaseDurationMs, renewDeadlineMs, retryPeriodMs] = parts as [number, number, number];
  return { leaseDurationMs, renewDeadlineMs, retryPeriodMs };
}
