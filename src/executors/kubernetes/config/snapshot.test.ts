import { describe, expect, it } from 'vitest';
import { ProfileSnapshotError } from './errors.js';
import { parseKubernetesProfile } from './profile.js';
import { canonicalJson, connectionHash, decodeProfileSnapshot, encodeProfileSnapshot, profileHash, templateHash } from './snapshot.js';
import type { KubernetesConnection } from '../types.js';

const K = 'profiles.k8s.kubernetes';
const TEMPLATE = 'spec:\n  containers:\n    - name: agent\n      image: registry.example/agent:1.2\n      env: [{ name: FOO, value: bar }]\n';
const profile = parseKubernetesProfile(
  {
    platform: 'linux/arm64',
    templateText: TEMPLATE,
    workspace: { size: '20Gi', storageClass: 'standard', accessModes: ['ReadWriteOnce'] },
    setupScript: 'npm ci',
    cleanupScript: 'echo bye',
    budgets: { imagePullSeconds: 600 },
  },
  { path: K },
);

function snapshotError(json: string): ProfileSnapshotError {
  try {
    decodeProfileSnapshot(json);
  } catch (err) {
    if (err instanceof ProfileSnapshotError) return err;
    throw err;
  }
  throw new Error('expected a ProfileSnapshotError');
}

describe('profile snapshot', () => {
  it('round-trips every setting a later Pod is built from', () => {
    const decoded = decodeProfileSnapshot(encodeProfileSnapshot(profile));
    expect(decoded).toEqual(profile);
    expect(encodeProfileSnapshot(decoded)).toBe(encodeProfileSnapshot(profile));
  });

  it.each([
    ['empty_dir', { mode: 'empty_dir' }],
    ['existing_claim', { mode: 'existing_claim', claimName: 'team-claim' }],
  ])('round-trips a %s workspace', (_mode, workspace) => {
    const p = parseKubernetesProfile({ templateText: TEMPLATE, workspace }, { path: K });
    expect(decodeProfileSnapshot(encodeProfileSnapshot(p)).workspace).toEqual(p.workspace);
  });

  it('decodes a snapshot recorded before the bootstrap budgets with their defaults', () => {
    const old = JSON.parse(encodeProfileSnapshot(profile)) as { budgets: Record<string, number> };
    for (const key of ['uploadSeconds', 'cloneSeconds', 'setupScriptSeconds']) delete old.budgets[key];
    expect(decodeProfileSnapshot(JSON.stringify(old)).budgets).toMatchObject({ imagePullSeconds: 600, uploadSeconds: 300, cloneSeconds: 600, setupScriptSeconds: 600 });
  });

  it('is canonical JSON: sorted keys, no whitespace, the template text as written', () => {
    const json = encodeProfileSnapshot(profile);
    const parsed = JSON.parse(json) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual([...Object.keys(parsed)].sort());
    expect(parsed).toMatchObject({ version: 1, platform: 'linux/arm64', mainContainer: 'agent', templateText: TEMPLATE, setupScript: 'npm ci' });
    expect(json).toBe(canonicalJson(parsed));
    expect(json, 'no whitespace between tokens').not.toMatch(/": |, "/);
  });

  it.each([
    ['not JSON', 'not json', 'kubernetes profile snapshot: is not valid JSON'],
    ['a missing field', JSON.stringify({ version: 1 }), 'kubernetes profile snapshot: has an invalid shape at platform'],
    ['an unknown field', canonicalJson({ ...JSON.parse(encodeProfileSnapshot(profile)), extra: 1 }), 'kubernetes profile snapshot: has an invalid shape at (root)'],
    ['another version', canonicalJson({ ...JSON.parse(encodeProfileSnapshot(profile)), version: 2 }), 'kubernetes profile snapshot: has unsupported version 2 (expected 1)'],
    [
      'a template that no longer validates',
      canonicalJson({ ...JSON.parse(encodeProfileSnapshot(profile)), templateText: `${TEMPLATE}      command: [sh]\n` }),
      'kubernetes profile snapshot: no longer validates (snapshot.pod_template.spec.containers[0].command: is reserved for Berth)',
    ],
    [
      'a bad workspace',
      canonicalJson({ ...JSON.parse(encodeProfileSnapshot(profile)), workspace: { mode: 'managed_pvc', size: 'big', storageClass: null, accessModes: ['ReadWriteOnce'], claimName: null } }),
      'kubernetes profile snapshot: no longer validates (snapshot.workspace.size: must be a positive Kubernetes quantity)',
    ],
  ])('refuses %s with a clear error', (_what, json, message) => {
    expect(snapshotError(json).message).toBe(message);
  });
});

describe('hashes', () => {
  const connection: KubernetesConnection = { authMode: 'kubeconfig', kubeconfigPath: '/k', kubeContext: null, namespace: 'agents', requestTimeoutSeconds: 30 };

  it('are sha256 hex of the canonical JSON', () => {
    for (const h of [profileHash(profile), connectionHash(connection), templateHash(profile)]) expect(h).toMatch(/^[0-9a-f]{64}$/);
  });

  it('change with what the Pod is built from and nothing else', () => {
    expect(profileHash(decodeProfileSnapshot(encodeProfileSnapshot(profile)))).toBe(profileHash(profile));
    expect(profileHash({ ...profile, setupScript: 'npm i' })).not.toBe(profileHash(profile));
    expect(templateHash({ templateText: `${TEMPLATE}\n` })).not.toBe(templateHash(profile));
    const reordered = { requestTimeoutSeconds: 30, namespace: 'agents', kubeContext: null, kubeconfigPath: '/k', authMode: 'kubeconfig' } as const;
    expect(connectionHash(reordered), 'key order does not matter').toBe(connectionHash(connection));
    expect(connectionHash({ ...connection, namespace: 'other' })).not.toBe(connectionHash(connection));
  });
});
