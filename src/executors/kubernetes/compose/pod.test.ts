import { describe, expect, it } from 'vitest';
import type { V1PodSpec } from '@kubernetes/client-node';
import { ComposeFieldError } from './errors.js';
import { composePod, type PodComposeInput } from './pod.js';
import { composePvc } from './pvc.js';
import { startScript } from './start-script.js';
import { IDENTITY, profileFixture } from '../testing/compose-fixtures.js';

const NONCE = 'ef'.repeat(32);
function input(overrides: Partial<PodComposeInput> = {}): PodComposeInput {
  return { profile: profileFixture(), identity: IDENTITY, namespace: 'agents', name: 'berth-6212a06cac8b50f7', managedPvcName: 'berth-6212a06cac8b50f7-workspace', createNonce: NONCE, ...overrides };
}

describe('composePod', () => {
  it('never mutates the profile template', () => {
    const profile = profileFixture();
    const before = JSON.stringify(profile);
    const pod = composePod(input({ profile }));
    expect(JSON.stringify(profile)).toBe(before);
    pod.spec!.containers[0]!.image = 'changed';
    pod.metadata!.labels!.team = 'changed';
    expect(JSON.stringify(profile)).toBe(before);
  });

  it('sets names, merged labels, the create nonce and the Pod invariants', () => {
    const pod = composePod(input());
    expect(pod.metadata).toMatchObject({ name: 'berth-6212a06cac8b50f7', namespace: 'agents', annotations: { 'berth.dev/create-nonce': NONCE } });
    expect(pod.metadata!.labels).toMatchObject({ team: 'a', 'berth.dev/session-id': 'ses-1', 'app.kubernetes.io/managed-by': 'berth' });
    expect(pod.spec).toMatchObject({
      restartPolicy: 'Always',
      os: { name: 'linux' },
      nodeSelector: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' },
      automountServiceAccountToken: false,
    });
    expect(composePod(input({ profile: profileFixture({ platform: 'linux/arm64' }) })).spec!.nodeSelector!['kubernetes.io/arch']).toBe('arm64');
  });

  it('gives the main container the bootstrap, the agentctl port and the reserved mounts', () => {
    const main = composePod(input()).spec!.containers[0]!;
    expect(main.command).toEqual(['sh', '-c']);
    expect(main.args).toEqual([startScript()]);
    expect(main.workingDir).toBe('/workspace');
    expect(main.terminationMessagePolicy).toBe('FallbackToLogsOnError');
    expect(main.ports).toEqual([{ name: 'berth-agentctl', containerPort: 8765, protocol: 'TCP' }]);
    expect(main.volumeMounts).toEqual([
      { name: 'berth-runtime', mountPath: '/opt/berth' },
      { name: 'berth-auth', mountPath: '/run/berth' },
      { name: 'berth-workspace', mountPath: '/workspace' },
    ]);
  });

  it.each([
    ['managed_pvc', { persistentVolumeClaim: { claimName: 'berth-6212a06cac8b50f7-workspace' } }],
    ['existing_claim', { persistentVolumeClaim: { claimName: 'team-claim' } }],
    ['empty_dir', { emptyDir: {} }],
  ] as const)('adds the reserved volumes for %s', (mode, workspace) => {
    const profile = profileFixture({ workspace: { mode, size: null, storageClass: null, accessModes: [], claimName: mode === 'existing_claim' ? 'team-claim' : null } });
    expect(composePod(input({ profile })).spec!.volumes).toEqual([
      { name: 'berth-runtime', emptyDir: {} },
      { name: 'berth-auth', emptyDir: { medium: 'Memory' } },
      { name: 'berth-workspace', ...workspace },
    ]);
  });

  it('adds secure defaults that pass Pod Security restricted for an image-only template', () => {
    const spec = composePod(input()).spec!;
    expect(spec.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      fsGroup: 1000,
      fsGroupChangePolicy: 'OnRootMismatch',
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(spec.containers[0]!.securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(spec.terminationGracePeriodSeconds).toBe(5);
    expect(spec.enableServiceLinks).toBe(false);
  });

  it('keeps what the template sets explicitly', () => {
    const spec: V1PodSpec = {
      automountServiceAccountToken: true,
      terminationGracePeriodSeconds: 60,
      securityContext: { runAsNonRoot: false, fsGroup: 2000, seccompProfile: { type: 'Unconfined' } },
      initContainers: [{ name: 'init', image: 'busybox', securityContext: { privileged: true } }],
      containers: [
        { name: 'agent', image: 'x', securityContext: { allowPrivilegeEscalation: true, capabilities: { add: ['NET_ADMIN'], drop: ['MKNOD'] } } },
        { name: 'sidecar', image: 'y', securityContext: { capabilities: { add: ['SYS_ADMIN'] } } },
      ],
    };
    const pod = composePod(input({ profile: profileFixture({ template: { spec } }) }));
    expect(pod.spec!.automountServiceAccountToken).toBe(true);
    expect(pod.spec!.terminationGracePeriodSeconds).toBe(60);
    expect(pod.spec!.securityContext).toEqual({ runAsNonRoot: false, fsGroup: 2000, seccompProfile: { type: 'Unconfined' } });
    expect(pod.spec!.containers[0]!.securityContext).toEqual({ allowPrivilegeEscalation: true, capabilities: { add: ['NET_ADMIN'], drop: ['MKNOD'] } });
    // Contradictory combinations the API server would reject get no escalation default.
    expect(pod.spec!.containers[1]!.securityContext).toEqual({ capabilities: { add: ['SYS_ADMIN'], drop: ['ALL'] } });
    expect(pod.spec!.initContainers![0]!.securityContext).toEqual({ privileged: true, capabilities: { drop: ['ALL'] } });
  });

  it('keeps the user a template chose instead of forcing uid 1000', () => {
    const profile = profileFixture({ template: { spec: { containers: [{ name: 'agent', image: 'x', securityContext: { runAsUser: 4242 } }] } } });
    const sc = composePod(input({ profile })).spec!.securityContext!;
    expect(sc.runAsUser).toBeUndefined();
    expect(sc.runAsNonRoot).toBe(true);
    expect(sc.fsGroup).toBe(1000);
  });

  it.each([
    [{ name: 'Bad_Name' }, 'pod.metadata.name'],
    [{ namespace: 'a.b' }, 'pod.metadata.namespace'],
    [{ managedPvcName: null }, 'pod.managed_pvc_name'],
    [{ profile: profileFixture({ mainContainer: 'missing' }) }, 'profile.main_container'],
    [{ identity: { ...IDENTITY, profile: '' } }, 'identity.profile'],
  ] as [Partial<PodComposeInput>, string][])('rejects %j at %s', (over, path) => {
    let caught: unknown;
    try {
      composePod(input(over));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ComposeFieldError);
    expect((caught as ComposeFieldError).path).toBe(path);
  });
});

describe('composePod: the scheduling gate', () => {
  it("adds Berth's gate only when asked, after the template's own gates", () => {
    expect(composePod(input()).spec!.schedulingGates).toBeUndefined();
    expect(composePod(input({ schedulingGate: true })).spec!.schedulingGates).toEqual([{ name: 'berth.dev/workspace-claim' }]);
    const profile = profileFixture({ template: { spec: { containers: [{ name: 'agent', image: 'x' }], schedulingGates: [{ name: 'example.com/quota' }] } } });
    expect(composePod(input({ profile, schedulingGate: true })).spec!.schedulingGates).toEqual([{ name: 'example.com/quota' }, { name: 'berth.dev/workspace-claim' }]);
    expect(composePod(input({ profile })).spec!.schedulingGates).toEqual([{ name: 'example.com/quota' }]);
  });

  it("never takes Berth's gate from a template (only Berth lifts it)", () => {
    const profile = profileFixture({ template: { spec: { containers: [{ name: 'agent', image: 'x' }], schedulingGates: [{ name: 'berth.dev/workspace-claim' }] } } });
    expect(composePod(input({ profile })).spec!.schedulingGates).toBeUndefined();
    expect(composePod(input({ profile, schedulingGate: true })).spec!.schedulingGates).toEqual([{ name: 'berth.dev/workspace-claim' }]);
  });
});

describe('composePvc', () => {
  const base = { identity: IDENTITY, namespace: 'agents', name: 'berth-6212a06cac8b50f7-workspace', createNonce: NONCE };
  it('requests the configured size, access modes and class as a Filesystem volume', () => {
    const pvc = composePvc({ ...base, workspace: { mode: 'managed_pvc', size: '10Gi', storageClass: 'fast', accessModes: ['ReadWriteOncePod'], claimName: null } });
    expect(pvc.metadata).toMatchObject({ name: base.name, namespace: 'agents', annotations: { 'berth.dev/create-nonce': NONCE } });
    expect(pvc.metadata!.labels!['berth.dev/instance-id']).toBe('instance-1');
    expect(pvc.spec).toEqual({ accessModes: ['ReadWriteOncePod'], volumeMode: 'Filesystem', resources: { requests: { storage: '10Gi' } }, storageClassName: 'fast' });
  });

  it('leaves the class to the cluster default when none is configured', () => {
    const pvc = composePvc({ ...base, workspace: { mode: 'managed_pvc', size: '1Gi', storageClass: null, accessModes: ['ReadWriteOnce'], claimName: null } });
    expect('storageClassName' in pvc.spec!).toBe(false);
  });

  it('refuses other workspace modes', () => {
    expect(() => composePvc({ ...base, workspace: { mode: 'empty_dir', size: null, storageClass: null, accessModes: [], claimName: null } })).toThrow(
      'profile.workspace.mode: must be managed_pvc to create a claim',
    );
  });
});
