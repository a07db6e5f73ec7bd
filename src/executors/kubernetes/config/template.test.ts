import { V1Container, V1PodTemplateSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ConfigFieldError } from '../../../shared/config-field-error.js';
import { parsePodTemplate } from './template.js';

const P = 'profiles.k8s.kubernetes.pod_template';

function fieldError(fn: () => unknown): ConfigFieldError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigFieldError) return err;
    throw err;
  }
  throw new Error('expected a ConfigFieldError');
}

const bare = 'spec:\n  containers:\n    - name: agent\n      image: registry.example/agent:1.2\n';

describe('parsePodTemplate', () => {
  it('decodes a bare {metadata, spec} document into client-node model instances', () => {
    const { template, root } = parsePodTemplate(`metadata:\n  labels: { team: a }\n${bare}`, P);
    expect(root).toBe(P);
    expect(template).toBeInstanceOf(V1PodTemplateSpec);
    expect(template.spec?.containers[0]).toBeInstanceOf(V1Container);
    expect(template.spec?.containers[0]).toMatchObject({ name: 'agent', image: 'registry.example/agent:1.2' });
    expect(template.metadata?.labels).toEqual({ team: 'a' });
  });

  it('accepts a v1 Pod document', () => {
    const { template, root } = parsePodTemplate(`apiVersion: v1\nkind: Pod\n${bare}`, P);
    expect(root).toBe(P);
    expect(template.spec?.containers[0]?.image).toBe('registry.example/agent:1.2');
  });

  it('accepts a v1 PodTemplate document and reports paths under its template', () => {
    const text = 'apiVersion: v1\nkind: PodTemplate\nmetadata: { name: mine }\ntemplate:\n  spec:\n    containers:\n      - name: agent\n        image: x\n';
    const { template, root } = parsePodTemplate(text, P);
    expect(root).toBe(`${P}.template`);
    expect(template.spec?.containers[0]?.image).toBe('x');
    const err = fieldError(() => parsePodTemplate(text.replace('image: x', 'imagee: x'), P));
    expect(err.path).toBe(`${P}.template.spec.containers[0].imagee`);
  });

  it('reads numbers as kubectl does (YAML 1.1: 0644 is octal) and keeps dates as strings', () => {
    const text = `${bare}      env:\n        - { name: SINCE, value: 2024-01-01 }\n  volumes:\n    - name: cfg\n      configMap: { name: cfg, defaultMode: 0644 }\n`;
    const { template } = parsePodTemplate(text, P);
    expect(template.spec?.volumes?.[0]?.configMap?.defaultMode).toBe(0o644);
    expect(template.spec?.containers[0]?.env?.[0]?.value).toBe('2024-01-01');
  });

  it('normalises numeric quantities to strings and checks them', () => {
    const text = `${bare}      resources: { limits: { cpu: 1, memory: 512Mi }, requests: { cpu: 250m } }\n`;
    const { template } = parsePodTemplate(text, P);
    expect(template.spec?.containers[0]?.resources).toMatchObject({ limits: { cpu: '1', memory: '512Mi' }, requests: { cpu: '250m' } });
    const err = fieldError(() => parsePodTemplate(text.replace('512Mi', '512MB'), P));
    expect([err.path, err.detail]).toEqual([`${P}.spec.containers[0].resources.limits.memory`, 'must be a Kubernetes quantity (e.g. 500m, 1Gi)']);
  });

  it('accepts int-or-string ports in probes', () => {
    const text = `${bare}      readinessProbe: { httpGet: { port: http, path: / } }\n      livenessProbe: { tcpSocket: { port: 8080 } }\n`;
    const c = parsePodTemplate(text, P).template.spec?.containers[0];
    expect(c?.readinessProbe?.httpGet?.port).toBe('http');
    expect(c?.livenessProbe?.tcpSocket?.port).toBe(8080);
  });

  it.each([
    ['an unknown container field', bare.replace('image:', 'imagee:'), `${P}.spec.containers[0].imagee`, "is not a known field (did you mean 'image'?)"],
    ['an unknown pod spec field', `${bare}  hostnetwork: true\n`, `${P}.spec.hostnetwork`, "is not a known field (did you mean 'hostNetwork'?)"],
    ['an unknown field deep down', `${bare}      securityContext: { capabilities: { drop: [ALL], ad: [NET_ADMIN] } }\n`, `${P}.spec.containers[0].securityContext.capabilities.ad`, "is not a known field (did you mean 'add'?)"],
    ['an unknown top-level field', `${bare}extra: 1\n`, `${P}.extra`, 'is not a known field'],
    ['an unknown Pod field', `apiVersion: v1\nkind: Pod\n${bare}extra: 1\n`, `${P}.extra`, 'is not a known field'],
    ['a Pod status', `apiVersion: v1\nkind: Pod\n${bare}status: { phase: Running }\n`, `${P}.status`, 'must not be set in a template (the cluster reports it)'],
    ['a string where a boolean belongs', `${bare}  hostNetwork: "yes please"\n`, `${P}.spec.hostNetwork`, 'must be true or false'],
    ['a number where a string belongs', `${bare}      env: [{ name: PORT, value: 80 }]\n`, `${P}.spec.containers[0].env[0].value`, 'must be a string (quote numbers and booleans)'],
    ['a fraction where an integer belongs', `${bare}  terminationGracePeriodSeconds: 1.5\n`, `${P}.spec.terminationGracePeriodSeconds`, 'must be an integer'],
    ['a string where a number belongs', `${bare}  priority: high\n`, `${P}.spec.priority`, 'must be a number'],
    ['a map where a list belongs', 'spec:\n  containers: { name: agent, image: x }\n', `${P}.spec.containers`, 'must be a list'],
    ['a list where a map belongs', `${bare}  securityContext: [runAsUser]\n`, `${P}.spec.securityContext`, 'must be a map'],
    ['an empty list item', 'spec:\n  containers:\n    -\n', `${P}.spec.containers[0]`, 'must not be empty'],
    ['a label value that is not a string', `metadata:\n  labels: { tier: 1 }\n${bare}`, `${P}.metadata.labels.tier`, 'must be a string (quote numbers and booleans)'],
    ['a missing spec', 'metadata: { labels: { a: b } }\n', `${P}.spec`, 'is required'],
    ['a PodTemplate without template', 'apiVersion: v1\nkind: PodTemplate\n', `${P}.template`, 'is required'],
    ['a wrong apiVersion', `apiVersion: apps/v1\nkind: Pod\n${bare}`, `${P}.apiVersion`, 'must be v1 (with kind Pod or PodTemplate)'],
    ['a wrong kind', `apiVersion: v1\nkind: Deployment\n${bare}`, `${P}.kind`, 'must be Pod or PodTemplate'],
    ['a kind without apiVersion', `kind: Pod\n${bare}`, `${P}.apiVersion`, 'must be v1 (with kind Pod or PodTemplate)'],
    ['a blank text', '  \n\n', P, 'is required'],
    ['only comments', '# nothing here\n', P, 'is required'],
    ['two documents', `${bare}---\n${bare}`, P, 'must contain exactly one YAML document'],
    ['a list document', '- a\n- b\n', P, 'must be a YAML map: a Pod, a PodTemplate or {metadata, spec}'],
    ['a duplicate key', `${bare}  hostNetwork: true\n  hostNetwork: false\n`, P, 'must be valid YAML (DUPLICATE_KEY at line 6, column 3 of the template)'],
  ])('rejects %s', (_what, text, path, detail) => {
    const err = fieldError(() => parsePodTemplate(text, P, '/etc/berth.yaml'));
    expect([err.path, err.detail]).toEqual([path, detail]);
    expect(err.file).toBe('/etc/berth.yaml');
  });

  it('reports a YAML syntax error by position without echoing the template', () => {
    const err = fieldError(() => parsePodTemplate('spec:\n  containers: [ { name: "sk-SECRET-TOKEN }\n', P));
    expect(err.path).toBe(P);
    expect(err.detail).toMatch(/^must be valid YAML \([A-Z_]+ at line \d+, column \d+ of the template\)$/);
    expect(err.message).not.toContain('SECRET');
  });

  it('refuses a template over 256 KiB before parsing it', () => {
    const big = `${bare}  # ${'x'.repeat(256 * 1024)}\n`;
    expect(fieldError(() => parsePodTemplate(big, P)).detail).toBe('must not exceed 256 KiB');
  });

  it('refuses alias bombs', () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 8; i++) lines.push(`${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`);
    lines.push('spec: { containers: [] }');
    expect(fieldError(() => parsePodTemplate(lines.join('\n'), P)).detail).toBe('must be valid YAML (too many aliases)');
  });
});
