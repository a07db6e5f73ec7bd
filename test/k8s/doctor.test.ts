// `berth doctor` for Kubernetes executors on the real test cluster, through the built CLI
// (`node dist/berth.js doctor`) with a data dir whose berth.yaml points at the executor's
// ServiceAccount (deploy/rbac.yaml): every check passes as that account; a Role missing one verb
// fails naming exactly that permission and the rule to add; a template the namespace's Pod
// Security refuses fails its dry-run with the reason and shows its security warnings; objects with
// Berth's labels that another installation created are listed (this one's are not); an API server
// that does not answer fails at once with the hint. Dry-runs leave nothing behind.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ownershipLabels } from '../../src/executors/kubernetes/compose/index.js';
import { ANNOTATION } from '../../src/executors/kubernetes/constants.js';
import { ensureBuilt, runCli, type CliResult } from '../integration/cli/helpers.js';
import { imageTemplate } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { loadKubeConfig } from './support/kube.js';
import { createTestNamespace, type TestNamespace } from './support/namespace.js';
import { restrictedPod } from './support/pods.js';
import { createExecutorServiceAccount, type ServiceAccountAccess } from './support/service-account.js';

const env = clusterEnv();
/** The installation id of a data dir in these tests. */
const OURS = '0123456789abcdef0123456789abcdef';

interface Line {
  status: 'ok' | 'warn' | 'fail';
  name: string;
  detail: string;
  fix: string | undefined;
}

/** Parses doctor's output (`STATUS  NAME  DETAIL`, an indented `fix:` line after a failure). */
function parseChecks(stdout: string): Line[] {
  const rows = stdout.split('\n');
  const out: Line[] = [];
  const width = Math.max(...rows.filter((r) => /^(ok|warn|fail) /.test(r)).map((r) => /^\S+\s+(.*?)\s{2,}/.exec(r)?.[1]?.length ?? 0));
  for (const [i, row] of rows.entries()) {
    const m = /^(ok|warn|fail)\s+/.exec(row);
    if (!m) continue;
    const rest = row.slice(6);
    const next = rows[i + 1] ?? '';
    out.push({
      status: m[1] as Line['status'],
      name: rest.slice(0, width).trim(),
      detail: rest.slice(width).trim(),
      fix: /^\s+fix: /.test(next) ? next.replace(/^\s+fix: /, '') : undefined,
    });
  }
  return out;
}

function lineOf(r: CliResult, name: string): Line {
  const line = parseChecks(r.stdout).find((l) => l.name === name);
  if (!line) throw new Error(`doctor printed no check "${name}":\n${r.stdout}${r.stderr}`);
  return line;
}

describe('berth doctor --executor on a real cluster', () => {
  let admin: KubeConfig;
  let ns: TestNamespace;
  let sa: ServiceAccountAccess;
  let noDelete: ServiceAccountAccess;
  const dirs: string[] = [];

  /** A data dir whose berth.yaml has executor `k8s` (kubeconfig `kubeconfig`) and these profiles. */
  const dataDir = (kubeconfig: string, profiles: Record<string, Record<string, unknown>> = {}, executor: Record<string, unknown> = {}): string => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-doctor-'));
    dirs.push(dir);
    writeFileSync(
      join(dir, 'berth.yaml'),
      stringify({
        executors: { k8s: { type: 'kubernetes', kubeconfig_path: kubeconfig, namespace: ns.name, request_timeout_seconds: 30, ...executor } },
        profiles: Object.fromEntries(Object.entries(profiles).map(([name, kubernetes]) => [name, { executor: 'k8s', kubernetes }])),
      }),
    );
    return dir;
  };
  const doctor = (dir: string, ...args: string[]): Promise<CliResult> => runCli(['doctor', ...args], { dataDir: dir });

  const profiles = {
    pvc: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } },
    scratch: { pod_template: imageTemplate(env.busyboxImage), workspace: { mode: 'empty_dir' } },
  };

  beforeAll(async () => {
    ensureBuilt();
    admin = loadKubeConfig(env.kubeconfig);
    ns = await createTestNamespace(admin, 'doctor', { podSecurity: 'restricted' });
    [sa, noDelete] = await Promise.all([
      createExecutorServiceAccount(admin, ns.name),
      createExecutorServiceAccount(admin, ns.name, { withoutVerb: { resource: 'pods', verb: 'delete' }, suffix: 'nodelete' }),
    ]);
  });

  afterAll(async () => {
    await Promise.allSettled([sa?.cleanup(), noDelete?.cleanup()]);
    await ns?.cleanup();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('passes every check as the ServiceAccount of deploy/rbac.yaml, and its dry-runs create nothing', async () => {
    const dir = dataDir(sa.kubeconfigPath, profiles);
    const executor = await doctor(dir, '--executor', 'k8s');
    expect(executor.code, executor.stdout + executor.stderr).toBe(0);
    expect(parseChecks(executor.stdout).map((l) => `${l.status} ${l.name}`)).toEqual([
      'ok config',
      'ok k8s: kubeconfig',
      'ok k8s: api server',
      'ok k8s: namespace',
      'ok k8s: permissions',
      'ok k8s: foreign objects',
    ]);
    expect(lineOf(executor, 'k8s: api server').detail).toMatch(new RegExp(`^Kubernetes v1\\.\\d+\\.\\d+.*, as ${sa.username}$`));
    // 17: with `patch` on pods, which lifts the scheduling gate of a Pod on a managed claim
    expect(lineOf(executor, 'k8s: permissions').detail).toBe(`all 17 needed permissions granted in namespace ${ns.name} to ${sa.username}`);
    // the Role cannot read namespaces: doctor says so instead of claiming it checked
    expect(lineOf(executor, 'k8s: namespace').detail).toContain(`${ns.name}: not read (this identity may not get namespaces, which Berth does not need)`);

    const pvc = await doctor(dir, '--executor', 'pvc');
    expect(pvc.code, pvc.stdout + pvc.stderr).toBe(0);
    expect(parseChecks(pvc.stdout).filter((l) => l.name.startsWith('pvc: ')).map((l) => `${l.status} ${l.name}`)).toEqual([
      'ok pvc: security',
      'ok pvc: dry-run pvc',
      'ok pvc: storage class',
      'ok pvc: dry-run pod',
    ]);
    expect(lineOf(pvc, 'pvc: storage class').detail).toBe('none set: the cluster\'s default "standard" (the API server set it on the dry-run claim)');

    const scratch = await doctor(dir, '--executor', 'scratch');
    expect(scratch.code, scratch.stdout + scratch.stderr).toBe(0);
    expect(parseChecks(scratch.stdout).filter((l) => l.name.startsWith('scratch: ')).map((l) => l.name)).toEqual(['scratch: security', 'scratch: dry-run pod']);

    // a plain `berth doctor` checks every executor and profile too (serve is not running: that line fails)
    const all = await doctor(dir);
    for (const name of ['k8s: permissions', 'pvc: dry-run pod', 'scratch: dry-run pod']) expect(lineOf(all, name).status, name).toBe('ok');
    expect(lineOf(all, 'serve').status).toBe('fail');

    const core = admin.makeApiClient(CoreV1Api);
    expect((await core.listNamespacedPod({ namespace: ns.name })).items, 'a dry-run stores no Pod').toEqual([]);
    expect((await core.listNamespacedPersistentVolumeClaim({ namespace: ns.name })).items, 'a dry-run stores no claim').toEqual([]);
  });

  it("lists the objects with Berth's labels that another Berth created, and not this one's", async () => {
    const dir = dataDir(sa.kubeconfigPath, profiles);
    mkdirSync(join(dir, 'state'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'state', 'installation-id'), `${OURS}\n`, { mode: 0o600 });
    const core = admin.makeApiClient(CoreV1Api);
    const berthPod = (name: string, installation: string) => {
      const pod = restrictedPod({ name, image: env.busyboxImage, command: ['sleep', '3600'], terminationGracePeriodSeconds: 0 });
      pod.metadata = {
        name,
        labels: ownershipLabels({ instanceId: `${name}-inst`, sessionId: name, executor: 'k8s', profile: 'pvc' }),
        annotations: { [ANNOTATION.installation]: installation },
      };
      return core.createNamespacedPod({ namespace: ns.name, body: pod });
    };
    await berthPod('berth-mine', OURS);
    await berthPod('berth-theirs', 'fedcba9876543210fedcba9876543210');
    try {
      const r = await doctor(dir, '--executor', 'k8s');
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const line = lineOf(r, 'k8s: foreign objects');
      expect(line.status).toBe('warn');
      expect(line.detail).toBe(
        `1 object with Berth's labels in namespace ${ns.name} was not created by this Berth, which leaves it alone (delete it yourself once nobody uses it): ` +
          `Pod ${ns.name}/berth-theirs (session berth-theirs): it was created by another Berth (installation fedcba98…)`,
      );
    } finally {
      for (const name of ['berth-mine', 'berth-theirs']) await core.deleteNamespacedPod({ namespace: ns.name, name, gracePeriodSeconds: 0 });
    }
  });

  it('names exactly the permission a Role lacks, and the rule to add', async () => {
    const r = await doctor(dataDir(noDelete.kubeconfigPath, profiles), '--executor', 'pvc');
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const failed = parseChecks(r.stdout).filter((l) => l.status === 'fail');
    expect(failed.map((l) => l.name)).toEqual(['k8s: permissions']);
    expect(failed[0]?.detail).toBe(`${noDelete.username} may not pods delete in namespace ${ns.name}`);
    expect(failed[0]?.fix).toBe(
      `add "delete" on "pods" to the Role bound to it in namespace ${ns.name}; deploy/rbac.yaml is the complete Role: sed 's/BERTH_NAMESPACE/${ns.name}/g' deploy/rbac.yaml | kubectl apply -f -`,
    );
    expect(lineOf(r, 'pvc: dry-run pod').status, 'creating is still allowed').toBe('ok');
  });

  it("fails the dry-run of a template the namespace's Pod Security refuses, naming why, and shows its warnings", async () => {
    const template = imageTemplate(env.agentImage, { securityContext: { capabilities: { add: ['NET_ADMIN'] } } });
    const hostnet = { pod_template: template.replace('"spec":{', '"spec":{"hostNetwork":true,"shareProcessNamespace":true,'), workspace: { mode: 'empty_dir' } };
    expect(JSON.parse(hostnet.pod_template)).toMatchObject({ spec: { hostNetwork: true, shareProcessNamespace: true } });
    const r = await doctor(dataDir(sa.kubeconfigPath, { hostnet }), '--executor', 'hostnet');
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const warnings = parseChecks(r.stdout).filter((l) => l.name === 'hostnet: security');
    expect(warnings.map((w) => w.status)).toEqual(['warn', 'warn', 'warn']);
    const T = 'profiles.hostnet.kubernetes.pod_template.spec';
    expect(warnings.map((w) => w.detail)).toEqual([
      `${T}.hostNetwork: the Pod shares the node network namespace (allowed; Berth does not strip it)`,
      `${T}.shareProcessNamespace: the containers share one process namespace: each sees the processes (and their environment) of the others (allowed; Berth does not strip it)`,
      `${T}.containers[0].securityContext.capabilities.add: the container adds Linux capabilities [NET_ADMIN] (allowed; Berth does not strip it)`,
    ]);
    const dry = lineOf(r, 'hostnet: dry-run pod');
    expect(dry.status).toBe('fail');
    expect(dry.detail).toContain('violates PodSecurity "restricted:latest"');
    expect(dry.detail).toContain('hostNetwork=true');
    expect(dry.fix).toBe(
      `namespace ${ns.name} enforces Pod Security "restricted": remove the settings named above from profiles.hostnet.kubernetes.pod_template, or run these sessions in a namespace whose pod-security.kubernetes.io/enforce level allows them`,
    );
    expect(parseChecks(r.stdout).filter((l) => l.status === 'fail').map((l) => l.name)).toEqual(['hostnet: dry-run pod']);
  });

  it('fails at once, with the hint, when nothing answers at the API server address', async () => {
    const config = parse(readFileSync(sa.kubeconfigPath, 'utf8')) as { clusters: { cluster: { server: string } }[] };
    for (const c of config.clusters) c.cluster.server = 'https://127.0.0.1:1';
    const dir = dataDir('unused');
    const kubeconfig = join(dir, 'kubeconfig-unreachable');
    writeFileSync(kubeconfig, stringify(config), { mode: 0o600 });
    // the longest request timeout: only a refused connection ends this within the test's timeout
    writeFileSync(join(dir, 'berth.yaml'), stringify({ executors: { k8s: { type: 'kubernetes', kubeconfig_path: kubeconfig, namespace: ns.name, request_timeout_seconds: 300 } } }));
    const r = await doctor(dir, '--executor', 'k8s');
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(parseChecks(r.stdout).map((l) => `${l.status} ${l.name}`)).toEqual(['ok config', 'ok k8s: kubeconfig', 'fail k8s: api server']);
    const api = lineOf(r, 'k8s: api server');
    expect(api.detail).toMatch(/^get server version: cannot reach the API server: .*ECONNREFUSED.* \(later checks skipped\)$/);
    expect(api.fix).toBe(
      'nothing answers at https://127.0.0.1:1: is the cluster running, and is that the right address (the cluster\'s server in the kubeconfig, context "berth-sa")? Check with: kubectl --context berth-sa version',
    );
  });
});
