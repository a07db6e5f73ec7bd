/**
 * The LeasePort over a real `coordination.k8s.io/v1` Lease (client-node 1.4.0's CoordinationV1Api).
 *
 * Two client-node details this adapter hides:
 * - `spec.renewTime`/`acquireTime` are MicroTime: the API server parses them as
 *   `2006-01-02T15:04:05.000000Z07:00` and refuses a plain `Date` (it serializes with milliseconds,
 *   HTTP 400), so writes send `V1MicroTime` (microsecond digits); reads come back as strings, parsed here.
 * - `ApiException.body` is the v1 Status as JSON text: a 409 is `AlreadyExists` on create and
 *   `Conflict` on a stale resourceVersion; both become LeaseConflictError.
 * @module
 */
import { ApiException, CoordinationV1Api, Observable, ServerConfiguration, V1MicroTime, createConfiguration } from '@kubernetes/client-node';
import type { ConfigurationOptions, KubeConfig, ObservableMiddleware, RequestContext, ResponseContext, V1Lease, V1Status } from '@kubernetes/client-node';
import { sanitize } from '../../shared/sanitize.js';
import { LeaseApiError, LeaseConflictError } from './lease-port.js';
import type { LeasePort, LeaseRecord, LeaseState } from './lease-port.js';

interface KubeLeasePortOptions {
  namespace: string;
  name: string;
  /** Bound on each API call (the elector also aborts a call it gave up on). @default 5000 */
  requestTimeoutMs?: number;
  /** Sent as the User-Agent. @default 'berth-leader-election' */
  userAgent?: string;
}

/** A LeasePort for the Lease `namespace/name`, with the credentials of `kc` (kubeconfig or in-cluster). */
export function kubeLeasePort(kc: KubeConfig, opts: KubeLeasePortOptions): LeasePort {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new LeaseApiError(`lease ${opts.namespace}/${opts.name}: the kubeconfig's current context names no cluster`, {});
  const api = new CoordinationV1Api(
    createConfiguration({ baseServer: new ServerConfiguration(cluster.server, {}), authMethods: { default: kc } }),
  );
  const { namespace, name } = opts;
  const timeoutMs = opts.requestTimeoutMs ?? 5000;
  const userAgent = opts.userAgent ?? 'berth-leader-election';
  const label = `${namespace}/${name}`;
  const call = async <T>(action: string, signal: AbortSignal | undefined, fn: (o: CallOptions) => Promise<T>): Promise<T> => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      return await fn({ middleware: [requestMiddleware(combined, userAgent)], middlewareMergeStrategy: 'append' });
    } catch (err) {
      throw toLeaseError(err, action, label, timeout.aborted);
    }
  };

  return {
    async get(signal) {
      try {
        return fromLease(await call('get', signal, (o) => api.readNamespacedLease({ namespace, name }, o)), label);
      } catch (err) {
        if (err instanceof LeaseApiError && err.status === 404) return null;
        throw err;
      }
    },
    async create(record, signal) {
      const body = toLease(namespace, name, record, undefined);
      return fromLease(await call('create', signal, (o) => api.createNamespacedLease({ namespace, body }, o)), label);
    },
    async replace(state, signal) {
      const body = toLease(namespace, name, state, state.resourceVersion);
      return fromLease(await call('replace', signal, (o) => api.replaceNamespacedLease({ namespace, name, body }, o)), label);
    },
  };
}

type CallOptions = ConfigurationOptions<ObservableMiddleware>;

function requestMiddleware(signal: AbortSignal, userAgent: string): ObservableMiddleware {
  return {
    pre(context: RequestContext): Observable<RequestContext> {
      context.setHeaderParam('User-Agent', userAgent);
      context.setSignal(signal);
      return new Observable(Promise.resolve(context));
    },
    post(response: ResponseContext): Observable<ResponseContext> {
      return new Observable(Promise.resolve(response));
    },
  };
}

function microTime(date: Date | null): V1MicroTime | undefined {
  return date === null ? undefined : new V1MicroTime(date.getTime());
}

function toLease(namespace: string, name: string, record: LeaseRecord, resourceVersion: string | undefined): V1Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    spec: {
      holderIdentity: record.holderIdentity,
      leaseDurationSeconds: record.leaseDurationSeconds,
      leaseTransitions: record.leaseTransitions,
      acquireTime: microTime(record.acquireTime),
      renewTime: microTime(record.renewTime),
    },
  };
}

/** client-node 1.4.0 hands MicroTime back as the server's string; a later version may give a Date. */
function parseTime(value: unknown): Date | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value;
  if (typeof value !== 'string' || value === '') return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

function fromLease(lease: V1Lease, label: string): LeaseState {
  const resourceVersion = lease.metadata?.resourceVersion;
  if (!resourceVersion) throw new LeaseApiError(`lease ${label}: the API server returned no resourceVersion`, {});
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: parseTime(spec.acquireTime),
    renewTime: parseTime(spec.renewTime),
    leaseTransitions: spec.leaseTransitions ?? 0,
    resourceVersion,
  };
}

function statusOf(err: ApiException<unknown>): V1Status | undefined {
  const body: unknown = err.body;
  if (body !== null && typeof body === 'object') return body as V1Status;
  if (typeof body !== 'string' || body.trim() === '') return undefined;
  try {
    return JSON.parse(body) as V1Status;
  } catch {
    return undefined;
  }
}

function toLeaseError(err: unknown, action: string, label: string, timedOut: boolean): Error {
  if (err instanceof ApiException) {
    const status = statusOf(err as ApiException<unknown>);
    if (err.code === 409) return new LeaseConflictError(label, status?.reason === 'AlreadyExists' ? 'already-exists' : 'conflict', { cause: err });
    // A replace of a Lease deleted meanwhile lost the race just like a stale resourceVersion.
    if (err.code === 404 && action === 'replace') return new LeaseConflictError(label, 'conflict', { cause: err });
    const detail = status?.message ?? status?.reason ?? `HTTP ${err.code}`;
    return new LeaseApiError(sanitize(`${action} lease ${label}: ${detail}`), { status: err.code, cause: err });
  }
  const message = timedOut ? 'request timed out' : err instanceof Error ? err.message : String(err);
  return new LeaseApiError(sanitize(`${action} lease ${label}: ${message}`), { cause: err });
}
