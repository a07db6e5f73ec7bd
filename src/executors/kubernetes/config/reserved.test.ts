import { describe, expect, it } from 'vitest';
import { ConfigFieldError } from '../../../shared/config-field-error.js';
import { checkReservedFields, isReservedPath } from './reserved.js';
import { parsePodTemplate } from './template.js';

const P = 'profiles.k8s.kubernetes.pod_template';

/** Parses a template (as YAML, so the cases read like what users write) and runs the reserved rules. */
function check(text: string, main = 'agent'): void {
  const { template, root } = parsePodTemplate(text, P);
  checkReservedFields(template, root, main, '/etc/berth.yaml');
}

function fieldError(text: string, main?: string): [string, string] {
  try {
    check(text, main);
  } catch (err) {
    if (err instanceof ConfigFieldError) return [err.path, err.detail];
    throw err;
  }
  throw new Error('expected a ConfigFieldError');
}

/** A valid template with the main container first; `main` adds YAML lines to it, `spec` to the Pod spec. */
function tpl(parts: { meta?: string; spec?: string; main?: string; sidecar?: string } = {}): string {
  return [
    ...(parts.meta !== undefined ? ['metadata:', ...indent(parts.meta, 2)] : []),
    'spec:',
    ...(parts.spec !== undefined ? indent(parts.spec, 2) : []),
    '  containers:',
    '    - name: agent',
    '      image: registry.example/agent:1.2',
    ...(parts.main !== undefined ? indent(parts.main, 6) : []),
    ...(parts.sidecar !== undefined ? ['    - name: sidecar', '      image: busybox', ...indent(parts.sidecar, 6)] : []),
    '',
  ].join('\n');
}
const indent = (text: string, n: number) => text.split('\n').map((l) => `${' '.repeat(n)}${l}`);

const S = `${P}.spec`;
const C0 = `${S}.containers[0]`;
const C1 = `${S}.containers[1]`;
const R = 'is reserved for Berth';

describe('checkReservedFields', () => {
  it('accepts a template that sets only what is the user’s', () => {
    expect(() =>
      check(
        tpl({
          meta: 'labels: { team: a, example.com/tier: gold }\nannotations: { example.com/note: hi }',
          spec: 'nodeSelector: { disktype: ssd }\nvolumes: [{ name: cache, emptyDir: {} }]\nserviceAccountName: agent',
          main: 'env: [{ name: FOO, value: bar }]\nports: [{ name: http, containerPort: 8080 }]\nvolumeMounts: [{ name: cache, mountPath: /cache }, { name: cache, mountPath: /opt/berthx }]',
          sidecar: 'command: [sleep, infinity]\nworkingDir: /tmp',
        }),
      ),
    ).not.toThrow();
  });

  it.each([
    // template metadata
    ['metadata.name', tpl({ meta: 'name: mine' }), `${P}.metadata.name`, R],
    ['metadata.generateName', tpl({ meta: 'generateName: mine-' }), `${P}.metadata.generateName`, R],
    ['metadata.namespace', tpl({ meta: 'namespace: other' }), `${P}.metadata.namespace`, R],
    ['metadata.uid', tpl({ meta: 'uid: abc' }), `${P}.metadata.uid`, R],
    ['metadata.resourceVersion', tpl({ meta: 'resourceVersion: "1"' }), `${P}.metadata.resourceVersion`, R],
    ['metadata.generation', tpl({ meta: 'generation: 2' }), `${P}.metadata.generation`, R],
    ['metadata.creationTimestamp', tpl({ meta: 'creationTimestamp: "2024-01-01T00:00:00Z"' }), `${P}.metadata.creationTimestamp`, R],
    ['metadata.deletionTimestamp', tpl({ meta: 'deletionTimestamp: "2024-01-01T00:00:00Z"' }), `${P}.metadata.deletionTimestamp`, R],
    ['metadata.ownerReferences', tpl({ meta: 'ownerReferences: []' }), `${P}.metadata.ownerReferences`, R],
    ['metadata.finalizers', tpl({ meta: 'finalizers: [x]' }), `${P}.metadata.finalizers`, R],
    ['metadata.managedFields', tpl({ meta: 'managedFields: []' }), `${P}.metadata.managedFields`, R],
    ['label app.kubernetes.io/name', tpl({ meta: 'labels: { app.kubernetes.io/name: x }' }), `${P}.metadata.labels.app.kubernetes.io/name`, R],
    ['label app.kubernetes.io/component', tpl({ meta: 'labels: { app.kubernetes.io/component: x }' }), `${P}.metadata.labels.app.kubernetes.io/component`, R],
    ['label app.kubernetes.io/managed-by', tpl({ meta: 'labels: { app.kubernetes.io/managed-by: x }' }), `${P}.metadata.labels.app.kubernetes.io/managed-by`, R],
    ['label app.kubernetes.io/instance', tpl({ meta: 'labels: { app.kubernetes.io/instance: x }' }), `${P}.metadata.labels.app.kubernetes.io/instance`, R],
    ['a berth.dev/ label', tpl({ meta: 'labels: { berth.dev/anything: x }' }), `${P}.metadata.labels.berth.dev/anything`, R],
    ['a berth.dev/ annotation', tpl({ meta: 'annotations: { berth.dev/create-nonce: x }' }), `${P}.metadata.annotations.berth.dev/create-nonce`, R],
    ['an invalid label key', tpl({ meta: 'labels: { "bad key": x }' }), `${P}.metadata.labels.bad key`, 'must be a valid label key'],
    ['an invalid label value', tpl({ meta: 'labels: { team: "a b" }' }), `${P}.metadata.labels.team`, 'must be a valid label value (up to 63 letters, digits, "-", "_" or ".")'],
    ['an invalid annotation key', tpl({ meta: 'annotations: { "/x": z }' }), `${P}.metadata.annotations./x`, 'must be a valid annotation key'],
    // pod spec
    ['restartPolicy', tpl({ spec: 'restartPolicy: Always' }), `${S}.restartPolicy`, R],
    ['nodeName', tpl({ spec: 'nodeName: node-1' }), `${S}.nodeName`, R],
    ['os', tpl({ spec: 'os: { name: linux }' }), `${S}.os`, R],
    ['nodeSelector kubernetes.io/os', tpl({ spec: 'nodeSelector: { kubernetes.io/os: linux }' }), `${S}.nodeSelector.kubernetes.io/os`, R],
    ['nodeSelector kubernetes.io/arch', tpl({ spec: 'nodeSelector: { kubernetes.io/arch: arm64 }' }), `${S}.nodeSelector.kubernetes.io/arch`, R],
    [
      'required node affinity on the arch',
      tpl({ spec: 'affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n      nodeSelectorTerms:\n        - matchExpressions:\n            - { key: disktype, operator: Exists }\n            - { key: kubernetes.io/arch, operator: In, values: [amd64] }' }),
      `${S}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].key`,
      R,
    ],
    [
      'required node affinity by field on the os',
      tpl({ spec: 'affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n      nodeSelectorTerms:\n        - matchFields: [{ key: kubernetes.io/os, operator: In, values: [linux] }]' }),
      `${S}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key`,
      R,
    ],
    [
      'preferred node affinity on the os',
      tpl({ spec: 'affinity:\n  nodeAffinity:\n    preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: 1\n        preference:\n          matchExpressions: [{ key: kubernetes.io/os, operator: In, values: [linux] }]' }),
      `${S}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key`,
      R,
    ],
    ['volume berth-runtime', tpl({ spec: 'volumes: [{ name: berth-runtime, emptyDir: {} }]' }), `${S}.volumes[0].name`, R],
    ['volume berth-auth', tpl({ spec: 'volumes: [{ name: x, emptyDir: {} }, { name: berth-auth, emptyDir: {} }]' }), `${S}.volumes[1].name`, R],
    ['volume berth-workspace', tpl({ spec: 'volumes: [{ name: berth-workspace, emptyDir: {} }]' }), `${S}.volumes[0].name`, R],
    // containers
    ['a container without an image', tpl({ sidecar: '' }).replace('image: busybox', 'imagePullPolicy: Always'), `${C1}.image`, 'is required'],
    ['an init container without an image', tpl({ spec: 'initContainers: [{ name: init }]' }), `${S}.initContainers[0].image`, 'is required'],
    ['a container without a name', tpl({ spec: 'initContainers: [{ image: busybox }]' }), `${S}.initContainers[0].name`, 'is required'],
    ['a second main container', tpl({ sidecar: '' }).replace('name: sidecar', 'name: agent'), `${C1}.name`, 'duplicates the main container'],
    ['no main container', tpl(), `${S}.containers`, 'must contain the configured main container (worker)', 'worker'],
    ['main container command', tpl({ main: 'command: [sh]' }), `${C0}.command`, R],
    ['main container args', tpl({ main: 'args: [-c, x]' }), `${C0}.args`, R],
    ['main container workingDir', tpl({ main: 'workingDir: /src' }), `${C0}.workingDir`, R],
    ['env HOME', tpl({ main: 'env: [{ name: HOME, value: /root }]' }), `${C0}.env[0].name`, R],
    ['env AGENTCTL_*', tpl({ sidecar: 'env: [{ name: A, value: b }, { name: AGENTCTL_PORT, value: "1" }]' }), `${C1}.env[1].name`, R],
    ['env BERTH_* in an init container', tpl({ spec: 'initContainers: [{ name: i, image: x, env: [{ name: BERTH_SESSION_ID, value: s }] }]' }), `${S}.initContainers[0].env[0].name`, R],
    ['envFrom', tpl({ sidecar: 'envFrom: [{ configMapRef: { name: cfg } }]' }), `${C1}.envFrom`, 'is not supported: it could set variables Berth reserves (list them under env)'],
    ['port name berth-agentctl', tpl({ sidecar: 'ports: [{ name: berth-agentctl, containerPort: 9000 }]' }), `${C1}.ports[0].name`, R],
    ['port 8765', tpl({ main: 'ports: [{ name: http, containerPort: 80 }, { containerPort: 8765 }]' }), `${C0}.ports[1].containerPort`, R],
    ['a mount of berth-workspace', tpl({ sidecar: 'volumeMounts: [{ name: berth-workspace, mountPath: /src }]' }), `${C1}.volumeMounts[0].name`, R],
    ['a mount at /opt/berth', tpl({ spec: 'volumes: [{ name: v, emptyDir: {} }]', main: 'volumeMounts: [{ name: v, mountPath: /opt/berth }]' }), `${C0}.volumeMounts[0].mountPath`, R],
    ['a mount below /run/berth', tpl({ spec: 'volumes: [{ name: v, emptyDir: {} }]', main: 'volumeMounts: [{ name: v, mountPath: /run/berth/home/.ssh }]' }), `${C0}.volumeMounts[0].mountPath`, R],
    ['a mount at /workspace after path cleaning', tpl({ main: 'volumeMounts: [{ name: v, mountPath: /tmp/../workspace/ }]' }), `${C0}.volumeMounts[0].mountPath`, R],
    ['a mount without a path', tpl({ main: 'volumeMounts: [{ name: v }]' }), `${C0}.volumeMounts[0].mountPath`, 'is required'],
    ['a device of a reserved volume', tpl({ sidecar: 'volumeDevices: [{ name: berth-runtime, devicePath: /dev/x }]' }), `${C1}.volumeDevices[0].name`, R],
    ['a device below /workspace', tpl({ sidecar: 'volumeDevices: [{ name: blk, devicePath: /workspace/dev }]' }), `${C1}.volumeDevices[0].devicePath`, R],
    ['an ephemeral container with reserved env', tpl({ spec: 'ephemeralContainers: [{ name: dbg, image: x, env: [{ name: HOME, value: / }] }]' }), `${S}.ephemeralContainers[0].env[0].name`, R],
  ])('rejects %s', (_rule, text, path, detail, main?: string) => {
    expect(fieldError(text, main)).toEqual([path, detail]);
  });

  it('names the path under the PodTemplate’s template', () => {
    const text = 'apiVersion: v1\nkind: PodTemplate\ntemplate:\n  spec:\n    restartPolicy: Never\n    containers: [{ name: agent, image: x }]\n';
    expect(fieldError(text)).toEqual([`${P}.template.spec.restartPolicy`, R]);
  });

  it('uses the configured main container name', () => {
    expect(() => check(tpl().replace('name: agent', 'name: worker'), 'worker')).not.toThrow();
    expect(fieldError(tpl({ main: 'command: [x]' }).replace('name: agent', 'name: worker'), 'worker')).toEqual([`${C0}.command`, R]);
  });
});

describe('isReservedPath', () => {
  it.each([
    ['/workspace', true],
    ['/workspace/sub', true],
    ['//workspace//', true],
    ['/a/../opt/berth/x', true],
    ['workspace', true],
    ['/workspaces', false],
    ['/opt', false],
    ['/run/berthday', false],
    ['/', false],
  ])('%s → %s', (path, expected) => {
    expect(isReservedPath(path)).toBe(expected);
  });
});
