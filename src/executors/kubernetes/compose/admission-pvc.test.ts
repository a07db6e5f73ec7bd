import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { assertPvcAdmitted, pvcAdmissionProblems } from './admission-pvc.js';
import { AdmissionError } from './errors.js';
import { composePvc } from './pvc.js';
import { IDENTITY } from '../testing/compose-fixtures.js';

const base = { identity: IDENTITY, namespace: 'agents', name: 'berth-6212a06cac8b50f7-workspace', createNonce: 'ab'.repeat(32) };
const defaulted = composePvc({ ...base, workspace: { mode: 'managed_pvc', size: '1Gi', storageClass: null, accessModes: ['ReadWriteOnce', 'ReadWriteOncePod'], claimName: null } });
const explicit = composePvc({ ...base, workspace: { mode: 'managed_pvc', size: '1Gi', storageClass: 'fast', accessModes: ['ReadWriteOnce'], claimName: null } });

function admitted(from: V1PersistentVolumeClaim, mutate: (pvc: V1PersistentVolumeClaim) => void): V1PersistentVolumeClaim {
  const pvc = structuredClone(from);
  mutate(pvc);
  return pvc;
}

describe('pvcAdmissionProblems', () => {
  it('accepts binding, protection, a default class, reordered modes and an equal quantity', () => {
    const pvc = admitted(defaulted, (p) => {
      p.metadata!.finalizers = ['kubernetes.io/pvc-protection'];
      p.metadata!.labels!.extra = 'x';
      p.metadata!.annotations!['volume.kubernetes.io/storage-provisioner'] = 'rancher.io/local-path';
      p.spec!.storageClassName = 'standard';
      p.spec!.volumeName = 'pvc-123';
      p.spec!.accessModes = ['ReadWriteOncePod', 'ReadWriteOnce'];
      p.spec!.resources!.requests!.storage = '1024Mi';
      p.status = { phase: 'Bound' };
    });
    expect(pvcAdmissionProblems(defaulted, pvc)).toEqual([]);
  });

  it.each<[string, V1PersistentVolumeClaim, (p: V1PersistentVolumeClaim) => void, string]>([
    ['name', defaulted, (p) => (p.metadata!.name = 'x'), 'admitted PVC changed metadata.name'],
    ['namespace', defaulted, (p) => (p.metadata!.namespace = 'x'), 'admitted PVC changed metadata.namespace'],
    ['ownership label', defaulted, (p) => (p.metadata!.labels!['berth.dev/profile'] = 'x'), 'admitted PVC ownership label "berth.dev/profile" changed'],
    ['extra berth label', defaulted, (p) => (p.metadata!.labels!['berth.dev/x'] = 'x'), 'admitted PVC added ownership label "berth.dev/x"'],
    ['create nonce', defaulted, (p) => delete p.metadata!.annotations!['berth.dev/create-nonce'], 'admitted PVC owned annotation "berth.dev/create-nonce" changed'],
    ['owner reference', defaulted, (p) => (p.metadata!.ownerReferences = [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'u' }]), 'admitted PVC added an owner reference'],
    ['other finalizer', defaulted, (p) => (p.metadata!.finalizers = ['kubernetes.io/pvc-protection', 'example.com/keep']), 'admitted PVC added the finalizer "example.com/keep"'],
    ['access modes', defaulted, (p) => (p.spec!.accessModes = ['ReadWriteMany']), 'admitted PVC mutated owned storage requirements (spec.accessModes)'],
    ['volume mode', defaulted, (p) => (p.spec!.volumeMode = 'Block'), 'admitted PVC mutated owned storage requirements (spec.volumeMode)'],
    ['requested size', defaulted, (p) => (p.spec!.resources!.requests!.storage = '2Gi'), 'admitted PVC mutated owned storage requirements (spec.resources.requests)'],
    ['limits', defaulted, (p) => (p.spec!.resources!.limits = { storage: '1Gi' }), 'admitted PVC mutated owned storage requirements (spec.resources.limits)'],
    ['explicit class', explicit, (p) => (p.spec!.storageClassName = 'slow'), 'admitted PVC mutated owned storage requirements (spec.storageClassName)'],
    ['attributes class', defaulted, (p) => (p.spec!.volumeAttributesClassName = 'gold'), 'admitted PVC mutated owned storage requirements (spec.volumeAttributesClassName)'],
    ['selector', defaulted, (p) => (p.spec!.selector = { matchLabels: { a: 'b' } }), 'admitted PVC mutated owned storage requirements (spec.selector)'],
    ['dataSource', defaulted, (p) => (p.spec!.dataSource = { kind: 'PersistentVolumeClaim', name: 'other' }), 'admitted PVC mutated owned storage requirements (spec.dataSource)'],
    ['dataSourceRef', defaulted, (p) => (p.spec!.dataSourceRef = { kind: 'PersistentVolumeClaim', name: 'other' }), 'admitted PVC mutated owned storage requirements (spec.dataSourceRef)'],
  ])('rejects a changed %s', (_name, from, mutate, message) => {
    expect(pvcAdmissionProblems(from, admitted(from, mutate))).toContain(message);
  });

  it('keeps an explicit class when it is unchanged', () => {
    expect(pvcAdmissionProblems(explicit, structuredClone(explicit))).toEqual([]);
  });
});

describe('assertPvcAdmitted', () => {
  it('throws an AdmissionError with every finding', () => {
    const pvc = admitted(defaulted, (p) => {
      p.spec!.volumeMode = 'Block';
      p.metadata!.ownerReferences = [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'u' }];
    });
    expect(() => assertPvcAdmitted(defaulted, pvc)).toThrow(AdmissionError);
    expect(pvcAdmissionProblems(defaulted, pvc)).toHaveLength(2);
  });
});
