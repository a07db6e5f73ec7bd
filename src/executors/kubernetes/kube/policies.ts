/**
 * The NetworkPolicy calls of the executor (a session's egress policy, issue 23): get (absent →
 * undefined), create, list by label (with the API server's clock, for the sweep) and delete by UID
 * + resourceVersion preconditions. A NetworkPolicy has no finalizers Berth waits for: once the
 * DELETE is accepted it is gone.
 * @module
 */
import { isIP } from 'node:net';
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import type { KubeClient } from './client.js';
import { KubeApiError, isConflict, isNotFound } from './errors.js';
import type { CreateOptions, DeleteOutcome, DeletePreconditions, Listing } from './objects.js';

/** The NetworkPolicy operations (same contract as the Pod and PVC ones of KubeObjects). */
export interface KubePolicies {
  get(namespace: string, name: string, signal?: AbortSignal): Promise<V1NetworkPolicy | undefined>;
  create(namespace: string, policy: V1NetworkPolicy, opts?: CreateOptions): Promise<V1NetworkPolicy>;
  delete(namespace: string, name: string, preconditions: DeletePreconditions, signal: AbortSignal): Promise<DeleteOutcome>;
  list(namespace: string, labelSelector: string, signal: AbortSignal): Promise<Listing<V1NetworkPolicy>>;
  /**
   * The API server's addresses, for a policy that blocks them: the client's server address (when an
   * IP) and the endpoints of `default/kubernetes` (when readable; a namespaced Role often cannot).
   */
  apiServerAddresses(signal?: AbortSignal): Promise<string[]>;
  /** The API server's address and port as this client reaches it (what a Pod would try). */
  apiServerEndpoint(): { host: string; port: number };
}

export function kubePolicies(client: KubeClient): KubePolicies {
  return {
    async get(namespace, name, signal) {
      try {
        return await client.request(`get networkpolicy ${namespace}/${name}`, signal, (o) => client.networking.readNamespacedNetworkPolicy({ namespace, name }, o));
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    create(namespace, policy, opts = {}) {
      const action = `${opts.dryRun ? 'dry-run create' : 'create'} networkpolicy ${namespace}/${policy.metadata?.name ?? '?'}`;
      return client.request(action, opts.signal, (o) => client.networking.createNamespacedNetworkPolicy({ namespace, body: policy, dryRun: opts.dryRun ? 'All' : undefined }, o));
    },
    async delete(namespace, name, preconditions, signal) {
      const action = `delete networkpolicy ${namespace}/${name}`;
      try {
        await client.request(action, signal, (o) => client.networking.deleteNamespacedNetworkPolicy({ namespace, name, body: { preconditions } }, o));
        return 'deleted';
      } catch (err) {
        if (isNotFound(err)) return 'absent';
        if (isConflict(err)) {
          throw new KubeApiError(`${action}: not deleted: the object changed since it was read (its UID no longer matches): ${(err as Error).message}`, { status: 409, reason: 'Conflict', cause: err });
        }
        throw err;
      }
    },
    apiServerEndpoint() {
      const url = new URL(client.server);
      return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || (url.protocol === 'http:' ? 80 : 443)) };
    },
    async apiServerAddresses(signal) {
      const out = new Set<string>();
      const host = new URL(client.server).hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) !== 0) out.add(host);
      try {
        const ep = await client.request('get endpoints default/kubernetes', signal, (o) => client.core.readNamespacedEndpoints({ namespace: 'default', name: 'kubernetes' }, o));
        for (const subset of ep.subsets ?? []) for (const a of subset.addresses ?? []) if (isIP(a.ip) !== 0) out.add(a.ip);
      } catch {
        // not readable with this Role: the server address alone
      }
      return [...out];
    },
    async list(namespace, labelSelector, signal) {
      const list = await client.request(`list networkpolicies in ${namespace}`, signal, (o) =>
        client.networking.listNamespacedNetworkPolicy({ namespace, labelSelector }, o),
      );
      // no Date header kept: the sweep ages a policy by the local clock (its threshold leaves room for skew)
      return { items: list.items, serverDate: undefined };
    },
  };
}
