/**
 * The Kubernetes side of `npm run demo -- --kubernetes`, done as a cluster admin would do it for a
 * real installation (README, "Kubernetes"): a namespace of its own (Pod Security `restricted`),
 * deploy/rbac.yaml applied into it, and a kubeconfig for the `berth-executor` ServiceAccount with a
 * token from the TokenRequest API (`kubectl create token`), so the demo's `berth serve` runs with
 * exactly the permissions a real one gets, never as cluster-admin.
 *
 *   node scripts/run-ts.mjs scripts/demo-kube.ts setup    ADMIN_KUBECONFIG NAMESPACE OUT_KUBECONFIG [TTL_SECONDS]
 *   node scripts/run-ts.mjs scripts/demo-kube.ts objects  ADMIN_KUBECONFIG NAMESPACE
 *   node scripts/run-ts.mjs scripts/demo-kube.ts teardown ADMIN_KUBECONFIG NAMESPACE
 *
 * `objects` prints the namespace's Berth Pods and PVCs (name, UID, phase), so the demo can show what
 * stop, resume and rm do to them. `teardown` deletes only a namespace `setup` created (it carries a
 * label saying so) and waits until it is gone; a missing namespace is not an error.
 * @module
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import type { V1Role, V1RoleBinding, V1ServiceAccount } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';

const RBAC_FILE = fileURLToPath(new URL('../deploy/rbac.yaml', import.meta.url));
const PLACEHOLDER = 'BERTH_NAMESPACE';
/** Marks a namespace as the demo's own: `teardown` deletes nothing else. */
const DEMO_LABEL = 'berth.dev/demo';
const MANAGED_BY = 'app.kubernetes.io/managed-by=berth';

type Core = CoreV1Api;

function usage(): never {
  process.stderr.write(
    'usage: demo-kube.ts setup ADMIN_KUBECONFIG NAMESPACE OUT_KUBECONFIG [TTL_SECONDS]\n' +
      '       demo-kube.ts objects ADMIN_KUBECONFIG NAMESPACE\n' +
      '       demo-kube.ts teardown ADMIN_KUBECONFIG NAMESPACE\n',
  );
  process.exit(2);
}

/** The HTTP status of a client-node ApiException (or undefined). */
function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** deploy/rbac.yaml for `namespace`: the ServiceAccount, the Role and the RoleBinding. */
async function loadRbac(namespace: string): Promise<{ sa: V1ServiceAccount; role: V1Role; binding: V1RoleBinding }> {
  const docs = parseAllDocuments((await readFile(RBAC_FILE, 'utf8')).split(PLACEHOLDER).join(namespace)).map((d) => d.toJS() as { kind?: string });
  const one = <T>(kind: string): T => {
    const found = docs.filter((d) => d?.kind === kind);
    if (found.length !== 1) throw new Error(`${RBAC_FILE}: expected one ${kind}, found ${found.length}`);
    return found[0] as T;
  };
  return { sa: one('ServiceAccount'), role: one('Role'), binding: one('RoleBinding') };
}

async function setup(kc: KubeConfig, namespace: string, out: string, ttlSeconds: number): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await core.createNamespace({
    body: {
      metadata: {
        name: namespace,
        labels: { [DEMO_LABEL]: 'true', 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' },
      },
    },
  });
  // Pods are refused until the controller-manager has created the namespace's default ServiceAccount.
  await until(`ServiceAccount ${namespace}/default`, 60_000, async () => {
    try {
      return await core.readNamespacedServiceAccount({ name: 'default', namespace });
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  });
  const { sa, role, binding } = await loadRbac(namespace);
  await core.createNamespacedServiceAccount({ namespace, body: sa });
  await rbac.createNamespacedRole({ namespace, body: role });
  await rbac.createNamespacedRoleBinding({ namespace, body: binding });

  const name = sa.metadata?.name ?? 'berth-executor';
  const token = (await core.createNamespacedServiceAccountToken({ name, namespace, body: { spec: { audiences: [], expirationSeconds: ttlSeconds } } })).status?.token;
  if (!token) throw new Error(`the TokenRequest for ${namespace}/${name} returned no token`);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the admin kubeconfig has no current cluster');
  const caData = cluster.caData ?? (cluster.caFile ? (await readFile(cluster.caFile)).toString('base64') : undefined);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'cluster', cluster: { server: cluster.server, ...(caData ? { 'certificate-authority-data': caData } : {}) } }],
    users: [{ name, user: { token } }],
    contexts: [{ name: 'berth', context: { cluster: 'cluster', user: name, namespace } }],
    'current-context': 'berth',
  };
  await writeFile(out, stringify(config), { mode: 0o600 });
  process.stdout.write(`namespace ${namespace}: ServiceAccount, Role and RoleBinding of deploy/rbac.yaml applied; kubeconfig for ${name} in ${out}\n`);
}

async function objects(core: Core, namespace: string): Promise<void> {
  const pods = (await core.listNamespacedPod({ namespace, labelSelector: MANAGED_BY })).items;
  const pvcs = (await core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector: MANAGED_BY })).items;
  const rows = [
    ...pods.map((p) => ['pod', p.metadata?.name, p.metadata?.uid, p.metadata?.deletionTimestamp ? 'Terminating' : p.status?.phase]),
    ...pvcs.map((p) => ['pvc', p.metadata?.name, p.metadata?.uid, p.status?.phase]),
  ];
  if (rows.length === 0) process.stdout.write(`(no Berth Pods or PVCs in namespace ${namespace})\n`);
  for (const r of rows) process.stdout.write(`${r.map((c) => c ?? '-').join('  ')}\n`);
}

async function teardown(core: Core, namespace: string): Promise<void> {
  try {
    const ns = await core.readNamespace({ name: namespace });
    if (ns.metadata?.labels?.[DEMO_LABEL] !== 'true') throw new Error(`namespace ${namespace} was not created by the demo (no ${DEMO_LABEL} label); not deleting it`);
    await core.deleteNamespace({ name: namespace });
  } catch (err) {
    if (statusOf(err) === 404) return;
    throw err;
  }
  await until(`namespace ${namespace} to be gone`, 180_000, async () => {
    try {
      await core.readNamespace({ name: namespace });
      return undefined;
    } catch (err) {
      if (statusOf(err) === 404) return true;
      throw err;
    }
  });
  process.stdout.write(`namespace ${namespace} deleted\n`);
}

async function main(): Promise<void> {
  const [cmd, adminKubeconfig, namespace, ...rest] = process.argv.slice(2);
  if (!cmd || !adminKubeconfig || !namespace) usage();
  const kc = new KubeConfig();
  kc.loadFromFile(adminKubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  switch (cmd) {
    case 'setup': {
      const [out, ttl] = rest;
      if (!out) usage();
      const ttlSeconds = ttl === undefined ? 86_400 : Number(ttl);
      if (!Number.isInteger(ttlSeconds) || ttlSeconds < 600) throw new Error(`TTL_SECONDS: must be an integer >= 600, got ${ttl}`);
      return setup(kc, namespace, out, ttlSeconds);
    }
    case 'objects':
      return objects(core, namespace);
    case 'teardown':
      return teardown(core, namespace);
    default:
      usage();
  }
}

main().catch((err: unknown) => {
  const body = (err as { body?: unknown } | null)?.body;
  process.stderr.write(`demo-kube: ${err instanceof Error ? err.message : String(err)}${typeof body === 'string' ? ` ${body.slice(0, 500)}` : ''}\n`);
  process.exit(1);
});
