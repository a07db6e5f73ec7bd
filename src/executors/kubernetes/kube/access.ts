/**
 * What doctor asks the cluster before anything is created: the server version (API discovery), the
 * identity (SelfSubjectReview), by SelfSubjectAccessReview which of the executor's permissions that
 * identity lacks in a namespace, and — where it may read them — the namespace and a StorageClass.
 * @module
 */
import { AuthenticationV1Api, StorageV1Api } from '@kubernetes/client-node';
import type { V1Namespace, V1StorageClass } from '@kubernetes/client-node';
import type { KubeClient } from './client.js';

export interface AccessCheck {
  verb: string;
  resource: string;
  subresource?: string;
  /** API group; '' (core) by default. */
  group?: string;
}

export interface AccessDenial extends AccessCheck {
  /** The authorizer's reason, when it gave one (RBAC usually does not). */
  reason: string | undefined;
}

interface ServerVersion {
  gitVersion: string;
  major: string;
  minor: string;
  platform: string;
}

/** What the executor needs in its namespace (mirrors deploy/rbac.yaml). */
export const EXECUTOR_ACCESS: readonly AccessCheck[] = [
  ...['get', 'list', 'watch', 'create', 'delete', 'patch'].map((verb) => ({ verb, resource: 'pods' })),
  ...['get', 'create'].flatMap((verb) => [
    { verb, resource: 'pods', subresource: 'exec' },
    { verb, resource: 'pods', subresource: 'portforward' },
  ]),
  ...['get', 'list', 'watch', 'create', 'delete', 'patch'].map((verb) => ({ verb, resource: 'persistentvolumeclaims' })),
  ...['list', 'watch'].map((verb) => ({ verb, resource: 'events' })),
];

/**
 * Wanted, not needed (mirrors deploy/rbac.yaml): writing Events about the executor's objects. Without
 * it launches work, but `kubectl describe pod` shows nothing of what Berth did (event-recorder.ts).
 */
export const EVENT_WRITE_ACCESS: AccessCheck = { verb: 'create', resource: 'events', group: 'events.k8s.io' };

/** `pods/exec create` style label for messages. */
export function describeAccess(check: AccessCheck): string {
  const resource = check.subresource ? `${check.resource}/${check.subresource}` : check.resource;
  return `${check.group ? `${check.group}/` : ''}${resource} ${check.verb}`;
}

/**
 * Asks, one review per check (in parallel), whether the client's identity may do each check in
 * `namespace`; returns the denied ones in the order given.
 * @throws KubeApiError when a review cannot be made (unreachable, unauthenticated).
 */
export async function deniedAccess(client: KubeClient, namespace: string, checks: readonly AccessCheck[], signal?: AbortSignal): Promise<AccessDenial[]> {
  const results = await Promise.all(
    checks.map(async (check) => {
      const review = await client.request(`access review ${describeAccess(check)} in ${namespace}`, signal, (o) =>
        client.authorization.createSelfSubjectAccessReview(
          {
            body: {
              apiVersion: 'authorization.k8s.io/v1',
              kind: 'SelfSubjectAccessReview',
              spec: {
                resourceAttributes: {
                  namespace,
                  verb: check.verb,
                  group: check.group ?? '',
                  resource: check.resource,
                  subresource: check.subresource,
                },
              },
            },
          },
          o,
        ),
      );
      return review.status?.allowed ? undefined : { ...check, reason: review.status?.reason || review.status?.evaluationError || undefined };
    }),
  );
  return results.filter((r): r is AccessDenial => r !== undefined);
}

/** GET /version. */
export async function serverVersion(client: KubeClient, signal?: AbortSignal): Promise<ServerVersion> {
  const info = await client.request('get server version', signal, (o) => client.version.getCode(undefined, o));
  return { gitVersion: info.gitVersion, major: info.major, minor: info.minor, platform: info.platform };
}

/** The authenticated user name (SelfSubjectReview, Kubernetes >= 1.28). */
export async function selfSubjectUser(client: KubeClient, signal?: AbortSignal): Promise<string | null> {
  const api = client.kubeConfig.makeApiClient(AuthenticationV1Api);
  const review = await client.request('self subject review', signal, (o) =>
    api.createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } }, o),
  );
  return review.status?.userInfo?.username ?? null;
}

/** GET the namespace `name`. */
export function getNamespace(client: KubeClient, name: string, signal?: AbortSignal): Promise<V1Namespace> {
  return client.request(`get namespace ${name}`, signal, (o) => client.core.readNamespace({ name }, o));
}

/** GET the StorageClass `name` (cluster-scoped). */
export function getStorageClass(client: KubeClient, name: string, signal?: AbortSignal): Promise<V1StorageClass> {
  const api = client.kubeConfig.makeApiClient(StorageV1Api);
  return client.request(`get storageclass ${name}`, signal, (o) => api.readStorageClass({ name }, o));
}
