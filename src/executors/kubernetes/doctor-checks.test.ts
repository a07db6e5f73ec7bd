import { describe, expect, it } from 'vitest';
import { admissionFix, connectionFix, defaultClassCheck, dryRunFix, eventsWriteCheck, foreignObjectsCheck, kubeconfigSource, permissionsCheck, requiredAccess, warningChecks } from './doctor-checks.js';
import { sweptObject } from './sweep-select.js';
import { EXECUTOR_ACCESS, KubeApiError, describeAccess } from './kube/index.js';
import type { KubernetesConnection } from './types.js';

const where = { executor: 'cluster', context: 'prod', server: 'https://10.0.0.1:6443' };
const labels = (checks: { verb: string; resource: string; subresource?: string }[]) => checks.map(describeAccess);

describe('requiredAccess', () => {
  it('is everything the executor uses when no profile says otherwise', () => {
    expect(requiredAccess([])).toEqual(EXECUTOR_ACCESS);
    expect(requiredAccess(['managed_pvc'], { pooled: true })).toEqual(EXECUTOR_ACCESS);
  });

  it('asks patch on pods with a managed claim (the scheduling gate is lifted by a patch) or a pool, on claims only with a pool (a claimed member is relabelled)', () => {
    expect(labels(requiredAccess(['managed_pvc'])).filter((l) => l.endsWith(' patch'))).toEqual(['pods patch']);
    expect(labels(requiredAccess(['existing_claim'])).filter((l) => l.endsWith(' patch'))).toEqual([]);
    expect(labels(requiredAccess(['empty_dir'])).filter((l) => l.endsWith(' patch'))).toEqual([]);
    expect(labels(requiredAccess(['managed_pvc'], { pooled: true })).filter((l) => l.endsWith(' patch'))).toEqual(['pods patch', 'persistentvolumeclaims patch']);
    expect(labels(requiredAccess(['empty_dir'], { pooled: true })).filter((l) => l.endsWith(' patch'))).toEqual(['pods patch']);
  });

  it('asks no claim permission for empty_dir and only read/watch for existing_claim', () => {
    expect(labels(requiredAccess(['empty_dir'])).filter((l) => l.startsWith('persistentvolumeclaims'))).toEqual([]);
    expect(labels(requiredAccess(['existing_claim'])).filter((l) => l.startsWith('persistentvolumeclaims'))).toEqual([
      'persistentvolumeclaims get',
      'persistentvolumeclaims list',
      'persistentvolumeclaims watch',
    ]);
    expect(labels(requiredAccess(['empty_dir'])).sort()).toEqual(labels(EXECUTOR_ACCESS.filter((c) => c.resource !== 'persistentvolumeclaims' && c.verb !== 'patch')).sort());
  });

  it('takes the union over profiles', () => {
    expect(requiredAccess(['empty_dir', 'managed_pvc'], { pooled: true })).toHaveLength(EXECUTOR_ACCESS.length);
    expect(requiredAccess(['empty_dir', 'managed_pvc'])).toHaveLength(EXECUTOR_ACCESS.length - 1);
    expect(labels(requiredAccess(['empty_dir', 'existing_claim'])).filter((l) => l.endsWith(' patch'))).toEqual([]);
  });
});

describe('permissionsCheck', () => {
  it('names exactly the denied permissions and the rule to add', () => {
    const c = permissionsCheck('cluster: permissions', 'agents', EXECUTOR_ACCESS, [{ verb: 'delete', resource: 'pods', reason: undefined }], 'system:serviceaccount:agents:berth');
    expect(c.ok).toBe(false);
    expect(c.detail).toBe('system:serviceaccount:agents:berth may not pods delete in namespace agents');
    expect(c.fix).toContain('add "delete" on "pods" to the Role bound to it in namespace agents');
    expect(c.fix).toContain("sed 's/BERTH_NAMESPACE/agents/g' deploy/rbac.yaml | kubectl apply -f -");
  });

  it('groups several denials by resource and keeps the authorizer reason', () => {
    const c = permissionsCheck('p', 'ns', EXECUTOR_ACCESS, [
      { verb: 'get', resource: 'pods', subresource: 'exec', reason: 'no RBAC policy matched' },
      { verb: 'create', resource: 'pods', subresource: 'exec', reason: 'no RBAC policy matched' },
      { verb: 'watch', resource: 'events', reason: undefined },
    ], null);
    expect(c.detail).toBe('this identity may not pods/exec get, pods/exec create, events watch in namespace ns (no RBAC policy matched)');
    expect(c.fix).toContain('add "get", "create" on "pods/exec"; "watch" on "events"');
  });

  it('passes when nothing is denied', () => {
    expect(permissionsCheck('p', 'ns', EXECUTOR_ACCESS, [], 'me')).toEqual({ name: 'p', ok: true, detail: `all ${EXECUTOR_ACCESS.length} needed permissions granted in namespace ns to me` });
  });
});

describe('connectionFix', () => {
  it('points at the server address when nothing answers', () => {
    const refused = new KubeApiError('get server version: cannot reach the API server: connect ECONNREFUSED 127.0.0.1:1', { reason: 'NetworkError', networkCode: 'ECONNREFUSED' });
    expect(connectionFix(refused, where)).toBe(
      'nothing answers at https://10.0.0.1:6443: is the cluster running, and is that the right address (the cluster\'s server in the kubeconfig, context "prod")? Check with: kubectl --context prod version',
    );
    expect(connectionFix(new KubeApiError('x', { reason: 'ClientTimeout' }), where)).toContain('nothing answers at');
  });

  it('tells rejected credentials and untrusted certificates apart', () => {
    expect(connectionFix(new KubeApiError('x', { status: 401, reason: 'Unauthorized' }), where)).toContain('rejected the credentials of context "prod"');
    expect(connectionFix(new KubeApiError('x', { reason: 'NetworkError', networkCode: 'DEPTH_ZERO_SELF_SIGNED_CERT' }), where)).toContain('certificate is not trusted');
  });
});

describe('dryRunFix', () => {
  const at = { profile: 'k8s', namespace: 'agents', executor: 'cluster' };
  const forbidden = (message: string) => new KubeApiError(message, { status: 403, reason: 'Forbidden' });

  it('names the Pod Security level and the template for a Pod Security refusal', () => {
    const err = forbidden('dry-run create pod agents/berth-1: pods "berth-1" is forbidden: violates PodSecurity "restricted:latest": host namespaces (hostNetwork=true)');
    expect(dryRunFix(err, 'Pod', at)).toBe(
      'namespace agents enforces Pod Security "restricted": remove the settings named above from profiles.k8s.kubernetes.pod_template, or run these sessions in a namespace whose pod-security.kubernetes.io/enforce level allows them',
    );
  });

  it('tells quota, webhook, missing namespace, RBAC and invalid objects apart', () => {
    expect(dryRunFix(forbidden('x: exceeded quota: q, requested: pods=1'), 'Pod', at)).toContain('ResourceQuota of namespace agents');
    expect(dryRunFix(forbidden('x: admission webhook "policy.example" denied the request'), 'Pod', at)).toContain('admission webhook');
    expect(dryRunFix(new KubeApiError('x: namespaces "agents" not found', { status: 404, reason: 'NotFound' }), 'PVC', at)).toBe(
      'create the namespace (kubectl create namespace agents) or fix executors.cluster.namespace',
    );
    expect(dryRunFix(forbidden('x: persistentvolumeclaims is forbidden: User "u" cannot create'), 'PVC', at)).toContain('grant "create" on "persistentvolumeclaims"');
    expect(dryRunFix(new KubeApiError('x: Pod "p" is invalid: spec.containers[0].image: Required value', { status: 422, reason: 'Invalid' }), 'Pod', at)).toContain('correct the field it names');
  });

  it('names the profile when admission would change owned fields', () => {
    expect(admissionFix('Pod', 'k8s')).toContain('profiles.k8s.kubernetes');
  });
});

describe('defaultClassCheck', () => {
  it('reports the default class the API server filled in, and fails without one', () => {
    expect(defaultClassCheck('s', 'k8s', { spec: { storageClassName: 'standard' } })).toMatchObject({ ok: true, detail: expect.stringContaining('"standard"') as unknown });
    const none = defaultClassCheck('s', 'k8s', { spec: {} });
    expect(none.ok).toBe(false);
    expect(none.fix).toContain('profiles.k8s.kubernetes.workspace.storage_class');
  });
});

describe('warningChecks and kubeconfigSource', () => {
  it('makes one non-failing warn line per warning', () => {
    expect(warningChecks('k8s: security', [{ path: 'profiles.k8s.kubernetes.pod_template.spec.hostPID', message: 'the Pod shares the node process namespace' }])).toEqual([
      { name: 'k8s: security', ok: true, warn: true, detail: 'profiles.k8s.kubernetes.pod_template.spec.hostPID: the Pod shares the node process namespace (allowed; Berth does not strip it)' },
    ]);
    expect(warningChecks('s', [])).toMatchObject([{ ok: true }]);
    expect(warningChecks('s', [])[0]?.warn).toBeUndefined();
  });

  it('says where the kubeconfig comes from', () => {
    const conn: KubernetesConnection = { authMode: 'kubeconfig', kubeconfigPath: null, kubeContext: null, namespace: 'a', requestTimeoutSeconds: 30 };
    expect(kubeconfigSource({ ...conn, kubeconfigPath: '/k' }, {})).toBe('/k');
    expect(kubeconfigSource(conn, { KUBECONFIG: '/a:/b' })).toBe('$KUBECONFIG (/a:/b)');
    expect(kubeconfigSource(conn, {})).toBe('~/.kube/config');
    expect(kubeconfigSource({ ...conn, authMode: 'in_cluster' }, {})).toBe('in-cluster service account');
  });
});

describe('foreignObjectsCheck', () => {
  const ours = 'a'.repeat(32);
  const object = (kind: 'Pod' | 'PVC', name: string, installation: string | undefined, session = 's1') =>
    sweptObject(kind, {
      name,
      namespace: 'agents',
      uid: `uid-${name}`,
      labels: { 'app.kubernetes.io/managed-by': 'berth', 'berth.dev/instance-id': `i-${name}`, 'berth.dev/session-id': session },
      annotations: installation === undefined ? {} : { 'berth.dev/installation': installation },
      creationTimestamp: new Date('2026-01-01T00:00:00Z'),
    })!;

  it('is a plain ok line when every Berth object is this installation’s', () => {
    expect(foreignObjectsCheck('k8s: foreign objects', 'agents', [object('Pod', 'berth-1', ours), object('PVC', 'berth-1-workspace', ours)], ours)).toEqual({
      name: 'k8s: foreign objects',
      ok: true,
      detail: "none: every Pod and PVC with Berth's labels in namespace agents was created by this Berth",
    });
  });

  it('warns (without failing) naming each object of another installation or of none, and why', () => {
    const check = foreignObjectsCheck('k8s: foreign objects', 'agents', [object('Pod', 'berth-1', ours), object('Pod', 'berth-2', 'b'.repeat(32), 's2'), object('PVC', 'old-workspace', undefined, 's3')], ours);
    expect(check).toMatchObject({ ok: true, warn: true });
    expect(check.detail).toBe(
      "2 objects with Berth's labels in namespace agents were not created by this Berth, which leaves them alone (delete them yourself once nobody uses them): " +
        'Pod agents/berth-2 (session s2): it was created by another Berth (installation bbbbbbbb…); ' +
        'PVC agents/old-workspace (session s3): it carries no installation id (another Berth, or one from before installation ids)',
    );
  });

  it('counts everything as foreign for a data dir without an installation id, and lists at most five', () => {
    const many = Array.from({ length: 7 }, (_, i) => object('Pod', `p${i}`, ours));
    const check = foreignObjectsCheck('n', 'agents', many, null);
    expect(check.detail).toMatch(/^7 objects .*: Pod agents\/p0 .*Pod agents\/p4 [^;]*; and 2 more$/);
  });
});

describe('eventsWriteCheck', () => {
  it('warns (without failing doctor) when Events cannot be written, naming the rule to add', () => {
    const c = eventsWriteCheck('cluster: events', 'agents', true, 'system:serviceaccount:agents:berth');
    expect(c).toMatchObject({ name: 'cluster: events', ok: true, warn: true });
    expect(c?.detail).toContain('may not events.k8s.io/events create in namespace agents: launches work');
    expect(c?.fix).toContain('apiGroups ["events.k8s.io"], resources ["events"], verbs ["create"]');
  });

  it('adds no line when they can', () => {
    expect(eventsWriteCheck('cluster: events', 'agents', false, null)).toBeNull();
  });
});
