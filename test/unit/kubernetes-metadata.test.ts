import { describe, expect, it } from 'vitest';
import { persistentMetadata } from '../../src/inventory/records.js';
import { KubernetesExecutor } from '../../src/executors/kubernetes/executor.js';
import { META } from '../../src/executors/kubernetes/constants.js';
import { decodeKubernetesMetadata, encodeKubernetesMetadata, KubernetesInventoryError, podAdmissionVerified, type KubernetesMetadata } from '../../src/executors/kubernetes/metadata.js';

const base: KubernetesMetadata = {
  instanceId: 's-1-abc',
  sessionId: 's-1',
  executor: 'cluster',
  profile: 'k8s',
  namespace: 'agents',
  mainContainer: 'agent',
  platform: 'linux/amd64',
  workspaceMode: 'managed_pvc',
  podName: 'berth-0123456789abcdef',
  podUid: 'pod-uid',
  pvcName: 'berth-0123456789abcdef-workspace',
  pvcUid: 'pvc-uid',
  pvcCreated: true,
  remotePort: 41001,
  restartCount: 0,
  agentctlFlavor: 'bundle',
  profileHash: 'p'.repeat(64),
  templateHash: 't'.repeat(64),
  pendingCreateDigest: null,
  podReclaimed: false,
  policyName: null,
  policyUid: null,
};
const DIGEST = 'd'.repeat(64);
/** Before the PVC create: nothing created yet, the claim's nonce digest recorded. */
const pvcCreating: KubernetesMetadata = { ...base, podUid: null, pvcName: null, pvcUid: null, pvcCreated: false, remotePort: null, restartCount: null, agentctlFlavor: null, pendingCreateDigest: DIGEST };
/** Before the Pod create: the claim recorded, the Pod's nonce digest recorded. */
const podCreating: KubernetesMetadata = { ...base, podUid: null, remotePort: null, restartCount: null, pendingCreateDigest: DIGEST };

describe('kubernetes inventory metadata', () => {
  it('round-trips through encode/decode and is entirely persistable', () => {
    const encoded = encodeKubernetesMetadata(base, 'ready');
    expect(persistentMetadata(encoded, [KubernetesExecutor.capabilities.metadataKeyPrefix])).toEqual(encoded);
    expect(decodeKubernetesMetadata(encoded, 'ready')).toEqual(base);
  });

  it('keeps optional keys absent while unknown', () => {
    const early = { ...base, podUid: null, remotePort: null, restartCount: null, agentctlFlavor: null };
    const encoded = encodeKubernetesMetadata(early, 'pvc_created');
    expect(encoded[META.podUid]).toBeUndefined();
    expect(decodeKubernetesMetadata(encoded, 'pvc_created')).toEqual(early);
  });

  it.each([
    ['pvc_created with a Pod recorded', base, 'pvc_created', /inconsistent/],
    ['pod_created without a Pod UID', { ...base, podUid: null }, 'pod_created', /needs a recorded Pod UID/],
    ['ready without the instance port', { ...base, remotePort: null }, 'ready', /instance port/],
    ['an empty_dir workspace with a PVC', { ...base, workspaceMode: 'empty_dir' as const }, 'ready', /empty_dir/],
    ['an existing claim marked created', { ...base, workspaceMode: 'existing_claim' as const }, 'ready', /existing claim/],
    ['a PVC name without its UID', { ...base, pvcUid: null }, 'ready', /together/],
    ['an unknown state', base, 'launching', /not a Kubernetes inventory state/],
    ['pvc_creating without the digest', { ...pvcCreating, pendingCreateDigest: null }, 'pvc_creating', /needs the digest/],
    ['pvc_creating with a PVC recorded', { ...pvcCreating, pvcName: 'x', pvcUid: 'y', pvcCreated: true }, 'pvc_creating', /inconsistent/],
    ['pod_creating with a Pod UID', { ...podCreating, podUid: 'pod-uid' }, 'pod_creating', /inconsistent/],
    ['pod_creating of a managed claim not recorded', { ...podCreating, pvcName: null, pvcUid: null, pvcCreated: false }, 'pod_creating', /inconsistent/],
    ['a digest outside a creating state', { ...base, pendingCreateDigest: DIGEST }, 'ready', /records an object being created/],
    ['a digest that is not SHA-256 hex', { ...podCreating, pendingCreateDigest: 'nonce-in-clear' }, 'pod_creating', /not a SHA-256 digest/],
  ])('refuses %s', (_what, m, state, message) => {
    expect(() => decodeKubernetesMetadata(encodeKubernetesMetadata(m, state), state)).toThrow(message);
  });

  it('records that the stopped Pod is gone with its containers (the key is true or absent)', () => {
    const reclaimed = { ...base, podReclaimed: true };
    const encoded = encodeKubernetesMetadata(reclaimed, 'ready');
    expect(encoded[META.podReclaimed]).toBe('true');
    expect(decodeKubernetesMetadata(encoded, 'ready')).toEqual(reclaimed);
    expect(encodeKubernetesMetadata(base, 'ready')[META.podReclaimed]).toBeUndefined();
    expect(() => decodeKubernetesMetadata({ ...encoded, [META.podReclaimed]: 'yes' }, 'ready')).toThrow(/must be true when set/);
  });

  it('refuses a resource instance id that differs from the agentctl instance id', () => {
    const encoded = { ...encodeKubernetesMetadata(base, 'ready'), [META.resourceInstanceId]: 'other' };
    expect(() => decodeKubernetesMetadata(encoded, 'ready')).toThrow(KubernetesInventoryError);
  });

  it('names a missing key', () => {
    const encoded: Record<string, string> = { ...encodeKubernetesMetadata(base, 'ready') };
    delete encoded[META.namespace];
    expect(() => decodeKubernetesMetadata(encoded, 'ready')).toThrow(/kubernetes_namespace is missing/);
  });

  it.each([
    ['pvc_creating', pvcCreating],
    ['pod_creating', podCreating],
    ['pod_creating (empty_dir)', { ...podCreating, workspaceMode: 'empty_dir' as const, pvcName: null, pvcUid: null, pvcCreated: false }],
  ])('round-trips the intent checkpoint %s with its digest', (_what, m) => {
    const state = _what.split(' ')[0] ?? '';
    const encoded = encodeKubernetesMetadata(m, state);
    expect(persistentMetadata(encoded, [KubernetesExecutor.capabilities.metadataKeyPrefix])).toEqual(encoded);
    expect(encoded[META.pendingCreateDigest]).toBe(DIGEST);
    expect(decodeKubernetesMetadata(encoded, state)).toEqual(m);
  });

  it('treats a Pod as admission-verified only after pod_admitted', () => {
    expect(podAdmissionVerified('pod_creating')).toBe(false);
    expect(podAdmissionVerified('pod_created')).toBe(false);
    expect(podAdmissionVerified('pod_admitted')).toBe(true);
    expect(podAdmissionVerified('ready')).toBe(true);
  });
});
