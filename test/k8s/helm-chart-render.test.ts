// The Helm chart deploy/helm/berth rendered with `helm template` (BERTH_TEST_HELM, the test
// cluster's helm; nothing is installed): sqlite runs one replica on a PVC with Recreate, postgres
// runs replicas on an emptyDir with the database Secret as env; the sessions Role has exactly
// deploy/rbac.yaml's rules and the controller gets only its Lease besides; the Pod passes Pod
// Security "restricted" (the API server takes every object, and the Pod, in a restricted namespace
// by server-side dry run); the generated berth.yaml is one Berth's own loader accepts; and a bad
// value fails the install naming its field (values.schema.json).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { loadConfig } from '../../src/config/index.js';
import { requireEnv } from './support/env.js';
import { apiFailure, loadKubeConfig } from './support/kube.js';
import { createTestNamespace, type TestNamespace } from './support/namespace.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHART = join(ROOT, 'deploy', 'helm', 'berth');
const RELEASE = 'team';
const NAMESPACE = 'berth-system';
const FULLNAME = 'team-berth';

/** One rendered object (the fields the checks read). */
interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

const work = mkdtempSync(join(tmpdir(), 'berth-helm-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let valuesFiles = 0;

/** `helm template` of the chart with `values`: the exit code, stdout and stderr. */
function helmTemplate(values: object, namespace = NAMESPACE): Promise<{ code: number; stdout: string; stderr: string }> {
  // BERTH_TEST_HELM is a command line (`<cluster binary> helm`): its words, no shell.
  const [bin, ...pre] = requireEnv('BERTH_TEST_HELM').trim().split(/\s+/);
  const file = join(work, `values-${++valuesFiles}.yaml`);
  writeFileSync(file, stringify(values));
  const args = [...pre, 'template', RELEASE, CHART, '--namespace', namespace, '--values', file];
  return new Promise((resolve, reject) => {
    execFile(bin!, args, { env: { ...process.env, HELM_CACHE_HOME: join(work, 'cache'), HELM_CONFIG_HOME: join(work, 'config'), HELM_DATA_HOME: join(work, 'data') } }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: typeof err?.code === 'number' ? err.code : 0, stdout, stderr });
    });
  });
}

/** The objects of a successful render. */
async function render(values: object = {}, namespace = NAMESPACE): Promise<Obj[]> {
  const r = await helmTemplate(values, namespace);
  if (r.code !== 0) throw new Error(`helm template failed (${r.code}):\n${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

function find(objs: Obj[], kind: string, name: string): Obj {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name} in: ${objs.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')}`);
  return o;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are read field by field */
const deployment = (objs: Obj[]): any => find(objs, 'Deployment', FULLNAME);
const podSpec = (objs: Obj[]): any => deployment(objs).spec.template.spec;
const container = (objs: Obj[]): any => podSpec(objs).containers[0];
const berthYaml = (objs: Obj[]): any => parse((find(objs, 'ConfigMap', `${FULLNAME}-config`) as any).data['berth.yaml']);
const argAfter = (objs: Obj[], flag: string): string => {
  const args = container(objs).args as string[];
  return args[args.indexOf(flag) + 1]!;
};

const POSTGRES = { store: { backend: 'postgres', postgres: { existingSecret: 'berth-db' } } };

describe('the Helm chart, rendered', () => {
  it('runs sqlite as one replica with Recreate and a PVC for the data dir', async () => {
    const objs = await render({ replicaCount: 3 });
    const d = deployment(objs);
    expect(d.spec.replicas).toBe(1);
    expect(d.spec.strategy).toEqual({ type: 'Recreate' });
    const pvc = find(objs, 'PersistentVolumeClaim', `${FULLNAME}-data`) as any;
    expect(pvc.spec.resources.requests.storage).toBe('1Gi');
    expect(podSpec(objs).volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: `${FULLNAME}-data` } });
    expect(berthYaml(objs).store).toEqual({ backend: 'sqlite' });
    expect(d.spec.template.spec.terminationGracePeriodSeconds).toBe(30);
  });

  it('runs postgres as two replicas with RollingUpdate, an emptyDir and the database Secret as env', async () => {
    const objs = await render(POSTGRES);
    const d = deployment(objs);
    expect(d.spec.replicas).toBe(2);
    expect(d.spec.strategy.type).toBe('RollingUpdate');
    expect(objs.some((o) => o.kind === 'PersistentVolumeClaim')).toBe(false);
    expect(podSpec(objs).volumes).toContainEqual({ name: 'data', emptyDir: {} });
    const env = container(objs).env as { name: string; valueFrom?: unknown }[];
    expect(env.find((e) => e.name === 'BERTH_DATABASE_URL')?.valueFrom).toEqual({ secretKeyRef: { name: 'berth-db', key: 'database-url' } });
    expect(env.find((e) => e.name === 'BERTH_SECRET_KEY')?.valueFrom).toEqual({ secretKeyRef: { name: 'berth-db', key: 'secret-key' } });
    expect(berthYaml(objs).store).toEqual({ backend: 'postgres', url_env: 'BERTH_DATABASE_URL', secret_key_env: 'BERTH_SECRET_KEY' });
  });

  it('elects a leader with postgres: --lease, the Pod identity, standbys Ready for rollouts, the Service on the leader label only', async () => {
    const objs = await render(POSTGRES);
    expect(argAfter(objs, '--lease')).toBe(FULLNAME);
    const env = container(objs).env as { name: string; valueFrom?: unknown }[];
    expect(env.find((e) => e.name === 'POD_NAME')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(env.find((e) => e.name === 'POD_NAMESPACE')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
    expect(container(objs).readinessProbe.httpGet.path).toBe('/readyz?standby=ok');
    expect(deployment(objs).spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
    expect((find(objs, 'Service', FULLNAME) as any).spec.selector).toMatchObject({ 'berth.dev/leader': 'true' });
    const lease = find(objs, 'Role', `${FULLNAME}-leader-election`) as any;
    expect(lease.rules).toContainEqual({ apiGroups: [''], resources: ['pods'], verbs: ['get', 'patch'] });
    // sqlite: one replica, no election, no label
    const single = await render();
    expect((container(single).args as string[]).includes('--lease')).toBe(false);
    expect(container(single).readinessProbe.httpGet.path).toBe('/readyz');
    expect((find(single, 'Service', FULLNAME) as any).spec.selector['berth.dev/leader']).toBeUndefined();
  });

  it("gives the sessions namespace exactly deploy/rbac.yaml's rules, and the release namespace only the Lease", async () => {
    const objs = await render({ sessions: { namespace: 'agents' } });
    const expected = parseAllDocuments(readFileSync(join(ROOT, 'deploy', 'rbac.yaml'), 'utf8'))
      .map((d) => d.toJS() as Obj)
      .find((o) => o.kind === 'Role') as any;
    const sessions = find(objs, 'Role', `${FULLNAME}-sessions`) as any;
    expect(sessions.metadata.namespace).toBe('agents');
    expect(sessions.rules).toEqual(expected.rules);
    const binding = find(objs, 'RoleBinding', `${FULLNAME}-sessions`) as any;
    expect(binding.metadata.namespace).toBe('agents');
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: FULLNAME, namespace: NAMESPACE }]);
    const lease = find(objs, 'Role', `${FULLNAME}-leader-election`) as any;
    expect(lease.metadata.namespace).toBe(NAMESPACE);
    expect(lease.rules).toEqual([{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }]);
    expect(objs.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')).toEqual([]);
    const executor = berthYaml(objs).executors.kubernetes;
    expect(executor).toMatchObject({ type: 'kubernetes', auth_mode: 'in_cluster', namespace: 'agents' });
  });

  it('passes Pod Security "restricted", with a read-only root and a writable /tmp', async () => {
    const objs = await render();
    const pod = podSpec(objs);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } });
    const c = container(objs);
    expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(c.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    expect(pod.volumes).toContainEqual({ name: 'tmp', emptyDir: {} });
    expect(pod.hostNetwork ?? false).toBe(false);
    // A Service named berth would otherwise put BERTH_PORT=tcp://… into the controller's environment.
    expect(pod.enableServiceLinks).toBe(false);
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.env.slice(0, 2)).toEqual([
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ]);
  });

  it('starts serve with the mounted token, the Service and Ingress names, and a Secure cookie behind TLS', async () => {
    const objs = await render({ ingress: { enabled: true, className: 'nginx', hosts: ['berth.example.com'], tls: [{ secretName: 'berth-tls', hosts: ['berth.example.com'] }] } });
    const args = container(objs).args as string[];
    expect(args.slice(0, 5)).toEqual(['serve', '--host', '0.0.0.0', '--port', '8080']);
    expect(argAfter(objs, '--data-dir')).toBe('/var/lib/berth');
    expect(argAfter(objs, '--token-file')).toBe('/etc/berth/token/token');
    expect(container(objs).volumeMounts).toContainEqual({ name: 'api-token', mountPath: '/etc/berth/token', readOnly: true });
    expect(argAfter(objs, '--public-host').split(',')).toEqual(
      expect.arrayContaining([FULLNAME, `${FULLNAME}.${NAMESPACE}.svc`, `${FULLNAME}.${NAMESPACE}.svc.cluster.local`, 'berth.example.com']),
    );
    expect(args).toContain('--secure-cookie');
    const secret = find(objs, 'Secret', `${FULLNAME}-api-token`) as any;
    expect(Buffer.from(secret.data.token, 'base64').toString()).toMatch(/^[A-Za-z0-9]{48}$/);
    const ingress = find(objs, 'Ingress', FULLNAME) as any;
    expect(ingress.spec.rules[0].http.paths[0].backend.service).toEqual({ name: FULLNAME, port: { name: 'http' } });
    const service = find(objs, 'Service', FULLNAME) as any;
    expect(service.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }]);
    expect((await render()).some((o) => o.kind === 'Ingress')).toBe(false);
    expect(container(await render()).args).not.toContain('--secure-cookie');
  });

  it("uses an existing token Secret and passes approved secrets, listed in the executor's secret_env", async () => {
    const objs = await render({
      apiToken: { existingSecret: 'my-token', key: 'api' },
      secretEnv: { existingSecret: 'agent-keys', names: ['ANTHROPIC_API_KEY'] },
      config: { executors: { kubernetes: { secret_env: ['OPENAI_API_KEY'] } } },
    });
    expect(objs.some((o) => o.kind === 'Secret')).toBe(false);
    expect(argAfter(objs, '--token-file')).toBe('/etc/berth/token/api');
    expect(podSpec(objs).volumes).toContainEqual(expect.objectContaining({ name: 'api-token', secret: expect.objectContaining({ secretName: 'my-token' }) }));
    expect(container(objs).env).toContainEqual({ name: 'ANTHROPIC_API_KEY', valueFrom: { secretKeyRef: { name: 'agent-keys', key: 'ANTHROPIC_API_KEY' } } });
    expect(berthYaml(objs).executors.kubernetes.secret_env).toEqual(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY']);
  });

  it.each([
    ['sqlite', {}],
    ['postgres', POSTGRES],
  ])("writes a berth.yaml Berth's own loader accepts (%s), the pod template as the profile's file", async (_name, values) => {
    const objs = await render({ ...values, config: { agents: { helper: { command: ['helper-agent'] } } } });
    const data = (find(objs, 'ConfigMap', `${FULLNAME}-config`) as any).data as Record<string, string>;
    const cfg = parse(data['berth.yaml']!);
    expect(cfg.profiles.k8s.kubernetes.pod_template_file).toBe('/etc/berth/config/pod-template.yaml');
    expect(cfg.defaults).toEqual({ executor: 'k8s' });
    expect(cfg.agents).toEqual({ helper: { command: ['helper-agent'] } });
    // The file the Pod mounts, placed here: the profile then names it relative to berth.yaml.
    const dir = mkdtempSync(join(work, 'config-'));
    writeFileSync(join(dir, 'pod-template.yaml'), data['pod-template.yaml']!);
    cfg.profiles.k8s.kubernetes.pod_template_file = './pod-template.yaml';
    writeFileSync(join(dir, 'berth.yaml'), stringify(cfg));
    const loaded = loadConfig({ dataDir: dir, path: join(dir, 'berth.yaml') });
    expect(loaded.store.backend).toBe(values === POSTGRES ? 'postgres' : 'sqlite');
  });

  it("puts sessions.pool and sessions.idle on the profile, where Berth's loader accepts them (and none when empty)", async () => {
    const plain = berthYaml(await render({}));
    expect(plain.profiles.k8s.pool).toBeUndefined();
    expect(plain.profiles.k8s.idle).toBeUndefined();
    const objs = await render({ sessions: { pool: { size: 2, max_age: '12h' }, idle: { suspend_after: '30m' } } });
    const data = (find(objs, 'ConfigMap', `${FULLNAME}-config`) as any).data as Record<string, string>;
    const cfg = parse(data['berth.yaml']!);
    expect(cfg.profiles.k8s.pool).toEqual({ size: 2, max_age: '12h' });
    expect(cfg.profiles.k8s.idle).toEqual({ suspend_after: '30m' });
    const dir = mkdtempSync(join(work, 'config-'));
    writeFileSync(join(dir, 'pod-template.yaml'), data['pod-template.yaml']!);
    cfg.profiles.k8s.kubernetes.pod_template_file = './pod-template.yaml';
    writeFileSync(join(dir, 'berth.yaml'), stringify(cfg));
    const loaded = loadConfig({ dataDir: dir, path: join(dir, 'berth.yaml') });
    expect(loaded.profiles.k8s?.pool?.size).toBe(2);
  });

  it("installs the egress proxy with postgres: its Deployment and Service, the executor's egress_proxy on them, the brokered keys in the proxy's env only", async () => {
    const network = { egress: 'allowlist', allow: ['api.github.com'], brokers: { anthropic: 'ANTHROPIC_API_KEY' } };
    const objs = await render({ ...POSTGRES, sessions: { network }, egress: { enabled: true, brokerSecret: 'model-keys', hosts: { 'models.internal': '10.1.2.3' } } });
    const cfg = berthYaml(objs);
    expect(cfg.profiles.k8s.network).toEqual(network);
    expect(cfg.executors.kubernetes.egress_proxy).toEqual({
      url: `http://${FULLNAME}-egress.berth-system.svc:3128`,
      namespace: 'berth-system',
      pod_labels: { 'app.kubernetes.io/name': 'berth-egress', 'app.kubernetes.io/instance': 'team' },
    });
    expect(cfg.executors.kubernetes.secret_env, 'the brokered name approved (the controller never gets its value)').toContain('ANTHROPIC_API_KEY');
    expect(cfg.egress).toEqual({ hosts: { 'models.internal': '10.1.2.3' } });
    const proxy = find(objs, 'Deployment', `${FULLNAME}-egress`) as any;
    const container = proxy.spec.template.spec.containers[0];
    expect(container.args.slice(0, 3)).toEqual(['egress-proxy', '--listen', '0.0.0.0:3128']);
    expect(container.env.find((e: any) => e.name === 'ANTHROPIC_API_KEY')?.valueFrom.secretKeyRef).toEqual({ name: 'model-keys', key: 'ANTHROPIC_API_KEY' });
    expect(proxy.spec.template.metadata.labels).toEqual(cfg.executors.kubernetes.egress_proxy.pod_labels);
    const controllerEnv = deployment(objs).spec.template.spec.containers[0].env.map((e: any) => e.name);
    expect(controllerEnv, "the controller's env has no model key").not.toContain('ANTHROPIC_API_KEY');
    expect((find(objs, 'Service', `${FULLNAME}-egress`) as any).spec.selector).toEqual(proxy.spec.selector.matchLabels);
    // Berth's loader accepts what the chart wrote
    const dir = mkdtempSync(join(work, 'config-'));
    const data = (find(objs, 'ConfigMap', `${FULLNAME}-config`) as any).data as Record<string, string>;
    writeFileSync(join(dir, 'pod-template.yaml'), data['pod-template.yaml']!);
    cfg.profiles.k8s.kubernetes.pod_template_file = './pod-template.yaml';
    writeFileSync(join(dir, 'berth.yaml'), stringify(cfg));
    expect(loadConfig({ dataDir: dir, path: join(dir, 'berth.yaml') }).profiles.k8s?.network?.egress).toBe('allowlist');
    // none of it unless enabled; and the proxy needs the shared store
    expect(berthYaml(await render({})).executors.kubernetes.egress_proxy).toBeUndefined();
    const sqlite = await helmTemplate({ egress: { enabled: true } });
    expect(sqlite.code).not.toBe(0);
    expect(sqlite.stderr).toMatch(/egress\.enabled: the egress proxy reads the sessions from the shared store: set store\.backend=postgres/);
  });

  it.each([
    ['config.store', { config: { store: { backend: 'sqlite' } } }, /config\.store: set store\.backend/],
    ['a template in sessions.kubernetes', { sessions: { kubernetes: { pod_template: 'spec: {}' } } }, /sessions\.kubernetes: set the template in sessions\.podTemplate/],
  ])("refuses %s (the chart's own keys), saying what to set instead", async (_name, values, message) => {
    const r = await helmTemplate(values);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  it.each([
    ['store.backend', { store: { backend: 'mysql' } }, /store.*backend/],
    ['persistence.size', { persistence: { size: 'lots' } }, /persistence.*size/],
    ['store.postgres.existingSecret', { store: { backend: 'postgres' } }, /postgres/],
    ['an unknown top-level key', { replicas: 2 }, /replicas/],
    ['image.pullPolicy', { image: { pullPolicy: 'Sometimes' } }, /pullPolicy/],
    ['ingress.hosts', { ingress: { enabled: true } }, /hosts/],
  ])('refuses a bad %s, naming the field', async (_name, values, message) => {
    const r = await helmTemplate(values);
    expect(r.code, r.stdout.slice(0, 200)).not.toBe(0);
    expect(r.stderr).toMatch(/schema/i);
    expect(r.stderr).toMatch(message);
  });
});

describe('the Helm chart on the test cluster (server-side dry run)', () => {
  const kc = loadKubeConfig();
  const api = KubernetesObjectApi.makeApiClient(kc);
  let ns: TestNamespace;

  beforeAll(async () => {
    ns = await createTestNamespace(kc, 'helm');
    // Created for real: a Pod is admitted only with its ServiceAccount there (the rest is dry run).
    await api.create(find(await render({}, ns.name), 'ServiceAccount', FULLNAME) as KubernetesObject);
  });
  afterAll(async () => {
    await ns?.cleanup();
  });

  /** The controller's Pod as the Deployment would create it. */
  const podOf = (objs: Obj[], name: string): KubernetesObject & { spec: any } => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns.name, labels: deployment(objs).spec.template.metadata.labels },
    spec: structuredClone(podSpec(objs)),
  });

  it.each([
    ['sqlite', {}],
    ['postgres', { ...POSTGRES, ingress: { enabled: true, hosts: ['berth.example.com'], tls: [{ secretName: 'berth-tls', hosts: ['berth.example.com'] }] } }],
  ])('is accepted in a namespace enforcing Pod Security "restricted" (%s), the Pod included', async (_name, values) => {
    const objs = await render(values, ns.name);
    for (const o of objs.filter((x) => x.kind !== 'ServiceAccount')) {
      await api.create(o as KubernetesObject, undefined, 'All').catch((err: unknown) => {
        throw new Error(`${o.kind}/${o.metadata.name} refused: ${apiFailure(err)?.message ?? String(err)}`, { cause: err });
      });
    }
    await api.create(podOf(objs, 'controller'), undefined, 'All');
  });

  it('is checked for real: a Pod that escalates privileges is refused there', async () => {
    const pod = podOf(await render({}, ns.name), 'escalating');
    pod.spec.containers[0].securityContext.allowPrivilegeEscalation = true;
    const err = await api.create(pod, undefined, 'All').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(apiFailure(err)?.message).toMatch(/violates PodSecurity "restricted/);
  });
});
