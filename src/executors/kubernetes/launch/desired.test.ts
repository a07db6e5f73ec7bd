import { describe, expect, it } from 'vitest';
import { assertPodAdmitted, assertPvcAdmitted } from '../compose/index.js';
import { IDENTITY, profileFixture } from '../testing/compose-fixtures.js';
import { ANNOTATION } from '../constants.js';
import { desiredPod, desiredPvc } from './desired.js';

const random = (n: number) => new Uint8Array(n).fill(7);
const ID = '0123456789abcdef0123456789abcdef';

describe('desired objects carry the installation id', () => {
  it('stamps it on the Pod and the managed PVC next to the create nonce, labels unchanged', () => {
    const profile = profileFixture({ workspace: { ...profileFixture().workspace, mode: 'managed_pvc', size: '1Gi' } });
    const input = { profile, identity: IDENTITY, namespace: 'agents', random, installationId: ID };
    const pod = desiredPod(input, 'berth-x', 'berth-x-workspace');
    const pvc = desiredPvc(input);
    for (const o of [pod, pvc]) {
      expect(o.metadata?.annotations?.[ANNOTATION.installation]).toBe(ID);
      expect(o.metadata?.annotations?.[ANNOTATION.createNonce]).toMatch(/^[0-9a-f]{64}$/);
    }
    const plain = desiredPod({ ...input, installationId: null }, 'berth-x', 'berth-x-workspace');
    expect(plain.metadata?.annotations?.[ANNOTATION.installation]).toBeUndefined();
    expect(pod.metadata?.labels).toEqual(plain.metadata?.labels);
    // what the API server stores as composed passes the launch's admission check
    expect(() => assertPodAdmitted(pod, { ...structuredClone(pod), metadata: { ...pod.metadata, uid: 'u' } }, { mainContainer: profile.mainContainer })).not.toThrow();
    expect(() => assertPvcAdmitted(pvc, { ...structuredClone(pvc), metadata: { ...pvc.metadata, uid: 'u' } })).not.toThrow();
  });
});
