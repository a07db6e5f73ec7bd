/**
 * What doctor asks the cluster before anything is created: the server version (API discovery) and,
 * by SelfSubjectAccessReview, which of the executor's permissions the configured identity lacks in
 * a namespace. Neither needs more than an authenticated user.
 * @module
 */
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

export interface ServerVersion {
  gitVersion: string;
  major: string;
  minor: string;
  platform: string;
}

/** What the executor needs in its namespace (mirrors deploy/rbac.yaml). */
export const EXECUTOR_ACCESS: readonly AccessCheck[] = [
  ...['get', 'list', 'watch', 'create', 'delete'].map((verb) => ({ verb, resource: 'pods' })),
  ...['get', 'create'].flatMap((verb) => [
    { verb, resource: 'pods', subresource: 'exec' },
    { verb, resource: 'pods', subresource: 'portforward' },
  ]),
  ...['get', 'list', 'watch', 'create', 'delete'].map((verb) => ({ verb, resource: 'persistentvolumeclaims' })),
  ...['list', 'watch'].map((verb) => ({ verb, resource: 'events' })),
];

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
