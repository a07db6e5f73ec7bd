import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { assertPodAdmitted, podAdmissionProblems } from './admission-pod.js';
import { AdmissionError } from './errors.js';
import { composePod } from './pod.js';
import { IDENTITY, profileFixture } from '../testing/compose-fixtures.js';

const OPTS = { mainContainer: 'agent' };
const desired = composePod({
  profile: profileFixture({
    template: {
      spec: {
        containers: [{ name: 'agent', image: 'x' }],
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }] } } },
      },
    },
  }),
  identity: IDENTITY,
  namespace: 'agents',
  name: 'berth-6212a06cac8b50f7',
  managedPvcName: 'berth-6212a06cac8b50f7-workspace',
  createNonce: 'ab'.repeat(32),
});

function admitted(mutate: (pod: V1Pod) => void): V1Pod {
  const pod = structuredClone(desired);
  mutate(pod);
  return pod;
}
const spec = (p: V1Pod) => p.spec!;
const main = (p: V1Pod) => p.spec!.containers[0]!;
const required = (p: V1Pod) => p.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms;
const preferred = (p: V1Pod) => (p.spec!.affinity!.nodeAffinity!.preferredDuringSchedulingIgnoredDuringExecution ??= []);

describe('podAdmissionProblems', () => {
  it('accepts the object as composed', () => {
    expect(podAdmissionProblems(desired, structuredClone(desired), OPTS)).toEqual([]);
  });

  it('accepts what webhooks and defaulting add without touching Berth fields', () => {
    const pod = admitted((p) => {
      p.metadata!.labels!['sidecar.istio.io/inject'] = 'true';
      p.metadata!.annotations!['kubectl.kubernetes.io/restartedAt'] = 'now';
      p.metadata!.uid = 'u1';
      p.metadata!.resourceVersion = '1';
      p.metadata!.managedFields = [{ manager: 'x' }];
      spec(p).nodeSelector!['topology.kubernetes.io/zone'] = 'a';
      spec(p).dnsPolicy = 'ClusterFirst';
      spec(p).schedulerName = 'default-scheduler';
      spec(p).serviceAccountName = 'default';
      spec(p).tolerations = [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }];
      Object.assign(main(p), { terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent' });
      // Defaulted noise on Berth's own objects: readOnly false, protocol, an empty medium.
      main(p).volumeMounts![0]!.readOnly = false;
      spec(p).volumes!.find((v) => v.name === 'berth-runtime')!.emptyDir = { medium: '' };
      spec(p).containers.push({ name: 'proxy', image: 'envoy', ports: [{ containerPort: 15001 }], volumeMounts: [{ name: 'istio', mountPath: '/etc/istio' }], env: [{ name: 'ISTIO_META', value: 'x' }] });
      spec(p).volumes!.push({ name: 'istio', emptyDir: {} });
      required(p)[0]!.matchExpressions!.push({ key: 'kubernetes.io/os', operator: 'In', values: ['linux', 'windows'] }, { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] });
      preferred(p).push(
        { weight: 1, preference: { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'NotIn', values: ['arm64'] }] } },
        { weight: 1, preference: { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'Exists' }] } },
      );
    });
    expect(podAdmissionProblems(desired, pod, OPTS)).toEqual([]);
  });

  it('accepts the hostPort the API server defaults on the agentctl port with hostNetwork, and only then', () => {
    const hostNet = structuredClone(desired);
    spec(hostNet).hostNetwork = true;
    const defaulted = structuredClone(hostNet);
    main(defaulted).ports!.find((p) => p.name === 'berth-agentctl')!.hostPort = 8765;
    expect(podAdmissionProblems(hostNet, defaulted, OPTS)).toEqual([]);
    const other = structuredClone(hostNet);
    main(other).ports!.find((p) => p.name === 'berth-agentctl')!.hostPort = 9999;
    expect(podAdmissionProblems(hostNet, other, OPTS)).toContain('admitted Pod mutated the agentctl port');
    const noHostNet = admitted((p) => (main(p).ports!.find((x) => x.name === 'berth-agentctl')!.hostPort = 8765));
    expect(podAdmissionProblems(desired, noHostNet, OPTS)).toContain('admitted Pod mutated the agentctl port');
  });

  it('accepts a scheduler-set nodeName only when reading after scheduling', () => {
    const pod = admitted((p) => (spec(p).nodeName = 'node-1'));
    expect(podAdmissionProblems(desired, pod, { ...OPTS, afterScheduling: true })).toEqual([]);
    expect(podAdmissionProblems(desired, pod, OPTS)).toEqual(['admitted Pod mutated an owned Pod invariant (spec.nodeName)']);
  });

  it("accepts the gate Berth set and another controller's gate, and finds Berth's gate removed or added", () => {
    const gated = composePod({ profile: profileFixture(), identity: IDENTITY, namespace: 'agents', name: 'berth-6212a06cac8b50f7', managedPvcName: 'berth-6212a06cac8b50f7-workspace', createNonce: 'ab'.repeat(32), schedulingGate: true });
    const finding = `admitted Pod mutated Berth's scheduling gate "berth.dev/workspace-claim"`;
    expect(podAdmissionProblems(gated, structuredClone(gated), OPTS)).toEqual([]);
    const withQuota = structuredClone(gated);
    withQuota.spec!.schedulingGates!.unshift({ name: 'example.com/quota' });
    expect(podAdmissionProblems(gated, withQuota, OPTS)).toEqual([]);
    const ungated = structuredClone(gated);
    delete ungated.spec!.schedulingGates;
    expect(podAdmissionProblems(gated, ungated, OPTS)).toEqual([finding]);
    expect(podAdmissionProblems(desired, admitted((p) => (spec(p).schedulingGates = [{ name: 'berth.dev/workspace-claim' }])), OPTS)).toEqual([finding]);
  });

  it.each<[string, (p: V1Pod) => void, string]>([
    ['name', (p) => (p.metadata!.name = 'other'), 'admitted Pod changed metadata.name'],
    ['namespace', (p) => (p.metadata!.namespace = 'other'), 'admitted Pod changed metadata.namespace'],
    ['owner reference', (p) => (p.metadata!.ownerReferences = [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'u' }]), 'admitted Pod added an owner reference'],
    ['finalizer', (p) => (p.metadata!.finalizers = ['example.com/hold']), 'admitted Pod added the finalizer "example.com/hold"'],
    ['ownership label', (p) => (p.metadata!.labels!['berth.dev/session-id'] = 'x'), 'admitted Pod ownership label "berth.dev/session-id" changed'],
    ['standard label', (p) => (p.metadata!.labels!['app.kubernetes.io/managed-by'] = 'helm'), 'admitted Pod ownership label "app.kubernetes.io/managed-by" changed'],
    ['extra berth label', (p) => (p.metadata!.labels!['berth.dev/forged'] = 'x'), 'admitted Pod added ownership label "berth.dev/forged"'],
    ['create nonce', (p) => (p.metadata!.annotations!['berth.dev/create-nonce'] = 'cd'.repeat(32)), 'admitted Pod owned annotation "berth.dev/create-nonce" changed'],
    ['extra berth annotation', (p) => (p.metadata!.annotations!['berth.dev/x'] = 'y'), 'admitted Pod added the owned annotation "berth.dev/x"'],
    ['restartPolicy', (p) => (spec(p).restartPolicy = 'Never'), 'admitted Pod mutated an owned Pod invariant (spec.restartPolicy)'],
    ['os removed', (p) => delete spec(p).os, 'admitted Pod mutated an owned Pod invariant (spec.os)'],
    ['automount', (p) => (spec(p).automountServiceAccountToken = true), 'admitted Pod mutated an owned Pod invariant (spec.automountServiceAccountToken)'],
    ['arch selector', (p) => (spec(p).nodeSelector!['kubernetes.io/arch'] = 'arm64'), 'admitted Pod mutated owned node selector "kubernetes.io/arch"'],
    ['os selector removed', (p) => delete spec(p).nodeSelector!['kubernetes.io/os'], 'admitted Pod mutated owned node selector "kubernetes.io/os"'],
    [
      'required In without the platform',
      (p) => required(p)[0]!.matchExpressions!.push({ key: 'kubernetes.io/os', operator: 'In', values: ['windows'] }),
      'admitted Pod added conflicting platform node affinity at spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1]',
    ],
    [
      'preferred NotIn of the platform',
      (p) => preferred(p).push({ weight: 1, preference: { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'NotIn', values: ['amd64'] }] } }),
      'admitted Pod added conflicting platform node affinity at spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0]',
    ],
    [
      'DoesNotExist',
      (p) => required(p)[0]!.matchExpressions!.push({ key: 'kubernetes.io/arch', operator: 'DoesNotExist' }),
      'admitted Pod added conflicting platform node affinity at spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1]',
    ],
    [
      'Gt',
      (p) => required(p)[0]!.matchExpressions!.push({ key: 'kubernetes.io/os', operator: 'Gt', values: ['1'] }),
      'admitted Pod added conflicting platform node affinity at spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1]',
    ],
    [
      'matchFields on a platform key',
      (p) => (required(p)[0]!.matchFields = [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }]),
      'admitted Pod added conflicting platform node affinity at spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0]',
    ],
    [
      'template platform affinity removed',
      (p) => (required(p)[0]!.matchExpressions = []),
      'admitted Pod removed the platform node affinity at spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]',
    ],
    ['main container removed', (p) => (main(p).name = 'renamed'), 'admitted Pod is missing the owned main container'],
    ['main command', (p) => (main(p).command = ['/entrypoint']), 'admitted Pod mutated the main-container bootstrap'],
    ['main args', (p) => (main(p).args = ['sleep infinity']), 'admitted Pod mutated the main-container bootstrap'],
    ['main workingDir', (p) => (main(p).workingDir = '/'), 'admitted Pod mutated the main-container bootstrap'],
    ['agentctl port', (p) => (main(p).ports![0]!.containerPort = 9999), 'admitted Pod mutated the agentctl port'],
    ['HOME env', (p) => (main(p).env = [{ name: 'HOME', value: '/root' }]), 'admitted Pod added a reserved environment key "HOME" to container "agent"'],
    ['AGENTCTL_ env', (p) => (main(p).env = [{ name: 'AGENTCTL_FUTURE', value: '1' }]), 'admitted Pod added a reserved environment key "AGENTCTL_FUTURE" to container "agent"'],
    ['envFrom', (p) => (main(p).envFrom = [{ configMapRef: { name: 'x' } }]), 'admitted Pod container "agent" uses envFrom, which can inject reserved environment keys'],
    [
      'init container with BERTH_ env',
      (p) => (spec(p).initContainers = [{ name: 'init', image: 'x', env: [{ name: 'BERTH_SESSION_ID', value: 'x' }] }]),
      'admitted Pod added a reserved environment key "BERTH_SESSION_ID" to init container "init"',
    ],
    ['reserved mount path changed', (p) => (main(p).volumeMounts![2]!.mountPath = '/work'), 'admitted Pod mutated the reserved volume mount "berth-workspace"'],
    [
      'sidecar mounting berth-auth',
      (p) => spec(p).containers.push({ name: 'spy', image: 'x', volumeMounts: [{ name: 'berth-auth', mountPath: '/secrets' }] }),
      'admitted Pod mutated a reserved volume mount (container "spy" mounts "berth-auth" at /secrets)',
    ],
    [
      'ephemeral container mounting berth-runtime',
      (p) => (spec(p).ephemeralContainers = [{ name: 'debug', image: 'x', volumeMounts: [{ name: 'berth-runtime', mountPath: '/opt/berth' }] }]),
      'admitted Pod mutated a reserved volume mount (ephemeral container "debug" mounts "berth-runtime" at /opt/berth)',
    ],
    [
      'sidecar on the agentctl port',
      (p) => spec(p).containers.push({ name: 'proxy', image: 'x', ports: [{ containerPort: 8765 }] }),
      'admitted Pod mutated the agentctl port (container "proxy")',
    ],
    ['reserved volume device', (p) => (main(p).volumeDevices = [{ name: 'berth-workspace', devicePath: '/dev/x' }]), 'admitted Pod added a reserved volume device to container "agent"'],
    ['reserved device path', (p) => (main(p).volumeDevices = [{ name: 'blk', devicePath: '/run/berth/dev' }]), 'admitted Pod added a reserved volume device to container "agent"'],
    [
      'reserved volume changed',
      (p) => (spec(p).volumes!.find((v) => v.name === 'berth-auth')!.emptyDir = {}),
      'admitted Pod mutated the reserved volume "berth-auth"',
    ],
    [
      'workspace claim swapped',
      (p) => (spec(p).volumes!.find((v) => v.name === 'berth-workspace')!.persistentVolumeClaim!.claimName = 'other'),
      'admitted Pod mutated the reserved volume "berth-workspace"',
    ],
  ])('rejects a changed %s', (_name, mutate, message) => {
    const problems = podAdmissionProblems(desired, admitted(mutate), OPTS);
    expect(problems).toContain(message);
  });
});

describe('assertPodAdmitted', () => {
  it('throws an AdmissionError naming the field, not the value', () => {
    let caught: unknown;
    try {
      assertPodAdmitted(desired, admitted((p) => (main(p).env = [{ name: 'AGENTCTL_BOOTSTRAP_NONCE', value: 'topsecret' }])), OPTS);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AdmissionError);
    expect((caught as AdmissionError).kind).toBe('Pod');
    expect((caught as Error).message).toContain('AGENTCTL_BOOTSTRAP_NONCE');
    expect((caught as Error).message).not.toContain('topsecret');
  });
});
