/**
 * A recording in-memory fake of the NetworkPolicy port (kube/policies.ts) for unit tests: stores
 * what is created (with a UID), honours delete preconditions, and records every call.
 * @module
 */
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { KubeApiError } from '../kube/index.js';
import type { KubePolicies } from '../kube/index.js';

export class FakePolicies implements KubePolicies {
  readonly calls: string[] = [];
  readonly stored = new Map<string, V1NetworkPolicy>();
  #uid = 0;
  apiServer: string[] = ['192.0.2.1'];

  get(namespace: string, name: string): Promise<V1NetworkPolicy | undefined> {
    this.calls.push(`get ${namespace}/${name}`);
    return Promise.resolve(this.stored.get(`${namespace}/${name}`));
  }

  create(namespace: string, policy: V1NetworkPolicy): Promise<V1NetworkPolicy> {
    const name = policy.metadata?.name ?? '';
    this.calls.push(`create ${namespace}/${name}`);
    if (this.stored.has(`${namespace}/${name}`)) return Promise.reject(new KubeApiError(`networkpolicies "${name}" already exists`, { status: 409, reason: 'AlreadyExists' }));
    this.#uid += 1;
    const created: V1NetworkPolicy = { ...policy, metadata: { ...policy.metadata, namespace, uid: `np-uid-${this.#uid}`, resourceVersion: '1' } };
    this.stored.set(`${namespace}/${name}`, created);
    return Promise.resolve(created);
  }

  delete(namespace: string, name: string, preconditions: { uid: string }): Promise<'deleted' | 'absent'> {
    this.calls.push(`delete ${namespace}/${name}`);
    const found = this.stored.get(`${namespace}/${name}`);
    if (found === undefined) return Promise.resolve('absent');
    if (found.metadata?.uid !== preconditions.uid) return Promise.reject(new KubeApiError('precondition failed: UID', { status: 409, reason: 'Conflict' }));
    this.stored.delete(`${namespace}/${name}`);
    return Promise.resolve('deleted');
  }

  list(namespace: string): Promise<{ items: V1NetworkPolicy[]; serverDate: string | undefined }> {
    this.calls.push(`list ${namespace}`);
    return Promise.resolve({ items: [...this.stored.values()].filter((p) => p.metadata?.namespace === namespace), serverDate: undefined });
  }

  apiServerEndpoint(): { host: string; port: number } {
    return { host: this.apiServer[0] ?? '192.0.2.1', port: 443 };
  }

  apiServerAddresses(): Promise<string[]> {
    return Promise.resolve([...this.apiServer]);
  }
}
