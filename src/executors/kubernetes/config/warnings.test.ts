import { describe, expect, it } from 'vitest';
import { parseKubernetesProfile } from './profile.js';
import { describeTemplateWarnings, templateWarnings } from './warnings.js';

const K = 'profiles.k8s.kubernetes';
const T = `${K}.pod_template`;
const profileOf = (templateText: string) => parseKubernetesProfile({ templateText }, { path: K });

describe('templateWarnings', () => {
  it('has nothing to say about a plain template', () => {
    const p = profileOf('spec:\n  automountServiceAccountToken: false\n  containers: [{ name: agent, image: x, securityContext: { privileged: false } }]\n');
    expect(templateWarnings(p, T)).toEqual([]);
  });

  it('reports each setting that weakens isolation from the node, with its path', () => {
    const p = profileOf(
      [
        'spec:',
        '  automountServiceAccountToken: true',
        '  hostNetwork: true',
        '  hostPID: true',
        '  hostIPC: true',
        '  volumes:',
        '    - { name: cache, emptyDir: {} }',
        '    - { name: docker, hostPath: { path: /var/run/docker.sock } }',
        '  initContainers:',
        '    - { name: init, image: x, securityContext: { privileged: true } }',
        '  containers:',
        '    - name: agent',
        '      image: x',
        '      ports: [{ containerPort: 80 }, { containerPort: 8080, hostPort: 8080 }]',
        '    - { name: dind, image: docker:dind, securityContext: { privileged: true } }',
        '',
      ].join('\n'),
    );
    expect(templateWarnings(p, T).map((w) => w.path)).toEqual([
      `${T}.spec.automountServiceAccountToken`,
      `${T}.spec.hostNetwork`,
      `${T}.spec.hostPID`,
      `${T}.spec.hostIPC`,
      `${T}.spec.volumes[1].hostPath`,
      `${T}.spec.initContainers[0].securityContext.privileged`,
      `${T}.spec.containers[0].ports[1].hostPort`,
      `${T}.spec.containers[1].securityContext.privileged`,
    ]);
    expect(templateWarnings(p, T)[0]).toEqual({ path: `${T}.spec.automountServiceAccountToken`, message: 'service account token automount is enabled' });
  });

  it('reports a projected service account token, shareProcessNamespace and the Pod-level root user and seccomp', () => {
    const p = profileOf(
      [
        'spec:',
        '  shareProcessNamespace: true',
        '  securityContext: { runAsUser: 0, seccompProfile: { type: Unconfined } }',
        '  volumes:',
        '    - name: token',
        '      projected:',
        '        sources:',
        '          - configMap: { name: ca }',
        '          - serviceAccountToken: { path: token, audience: vault }',
        '  containers: [{ name: agent, image: x }]',
        '',
      ].join('\n'),
    );
    expect(templateWarnings(p, T)).toEqual([
      { path: `${T}.spec.shareProcessNamespace`, message: 'the containers share one process namespace: each sees the processes (and their environment) of the others' },
      { path: `${T}.spec.securityContext.runAsUser`, message: 'the containers run as root (uid 0) unless they set their own user' },
      { path: `${T}.spec.securityContext.seccompProfile.type`, message: 'seccomp is off (Unconfined): every system call is allowed' },
      { path: `${T}.spec.volumes[0].projected.sources[1].serviceAccountToken`, message: 'a projected volume mounts a service account token' },
    ]);
  });

  it('reports added capabilities, privilege escalation, root, Unconfined seccomp and an unmasked /proc on every kind of container', () => {
    const weak = '{ capabilities: { add: [NET_ADMIN, SYS_PTRACE] }, allowPrivilegeEscalation: true, runAsUser: 0, seccompProfile: { type: Unconfined }, procMount: Unmasked }';
    const p = profileOf(
      [
        'spec:',
        `  initContainers: [{ name: init, image: x, securityContext: ${weak} }]`,
        '  containers:',
        '    - { name: agent, image: x, securityContext: { capabilities: { add: [], drop: [ALL] }, allowPrivilegeEscalation: false, runAsUser: 1000, seccompProfile: { type: RuntimeDefault }, procMount: Default } }',
        `    - { name: side, image: x, securityContext: ${weak} }`,
        `  ephemeralContainers: [{ name: debug, image: x, securityContext: ${weak} }]`,
        '',
      ].join('\n'),
    );
    const expected = (at: string) => [
      { path: `${at}.securityContext.capabilities.add`, message: 'the container adds Linux capabilities [NET_ADMIN, SYS_PTRACE]' },
      { path: `${at}.securityContext.allowPrivilegeEscalation`, message: 'a process of the container may gain more privileges than its parent (setuid binaries)' },
      { path: `${at}.securityContext.runAsUser`, message: 'the container runs as root (uid 0)' },
      { path: `${at}.securityContext.seccompProfile.type`, message: 'seccomp is off (Unconfined): every system call is allowed' },
      { path: `${at}.securityContext.procMount`, message: '/proc is mounted unmasked: the paths the runtime hides or makes read-only under /proc are open' },
    ];
    expect(templateWarnings(p, T)).toEqual([
      ...expected(`${T}.spec.initContainers[0]`),
      ...expected(`${T}.spec.containers[1]`),
      ...expected(`${T}.spec.ephemeralContainers[0]`),
    ]);
  });

  it('follows a PodTemplate document’s own structure', () => {
    const p = profileOf('apiVersion: v1\nkind: PodTemplate\ntemplate:\n  spec:\n    hostNetwork: true\n    containers: [{ name: agent, image: x }]\n');
    expect(templateWarnings(p, T)).toEqual([{ path: `${T}.template.spec.hostNetwork`, message: 'the Pod shares the node network namespace' }]);
  });

  it('sums the warnings up in one launch line, and says nothing without any', () => {
    expect(describeTemplateWarnings([])).toBeNull();
    expect(describeTemplateWarnings([{ path: `${T}.spec.hostPID`, message: 'the Pod shares the node process namespace' }])).toBe(
      `1 security warning about the Pod template (allowed, not changed; berth doctor lists them): ${T}.spec.hostPID: the Pod shares the node process namespace`,
    );
    expect(describeTemplateWarnings([{ path: 'a', message: 'x' }, { path: 'b', message: 'y' }])).toMatch(/^2 security warnings .*: a: x; b: y$/);
  });
});
