/**
 * Runs Kubernetes tests as the executor's ServiceAccount, not as cluster-admin: applies the
 * ServiceAccount, Role and RoleBinding of deploy/rbac.yaml in a test namespace (optionally with one
 * verb removed, for doctor), mints a token with the TokenRequest API and writes a kubeconfig that
 * uses it, either inline or through an exec credential plugin script.
 * @module
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1PolicyRule, V1Role, V1RoleBinding, V1ServiceAccount } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';

export const RBAC_FILE = fileURLToPath(new URL('../../../deploy/rbac.yaml', import.meta.url));
export const RBAC_NAMESPACE_PLACEHOLDER = 'BERTH_NAMESPACE';

export interface RbacObjects {
  serviceAccount: V1ServiceAccount;
  role: V1Role;
  roleBinding: V1RoleBinding;
}

/** deploy/rbac.yaml with the namespace placeholder replaced. */
export async function loadRbac(namespace: string): Promise<RbacObjects> {
  const text = (await readFile(RBAC_FILE, 'utf8')).split(RBAC_NAMESPACE_PLACEHOLDER).join(namespace);
  const docs = parseAllDocuments(text).map((d) => d.toJS() as { kind?: string });
  const find = <T>(kind: string): T => {
    const matches = docs.filter((d) => d?.kind === kind);
    if (matches.length !== 1) throw new Error(`${RBAC_FILE}: expected one ${kind}, found ${matches.length}`);
    return matches[0] as T;
  };
  return { serviceAccount: find('ServiceAccount'), role: find('Role'), roleBinding: find('RoleBinding') };
}

export interface ServiceAccountOptions {
  /** Remove one verb of one resource (e.g. `{ resource: 'pods', verb: 'delete' }`) from the Role. */
  withoutVerb?: { resource: string; verb: string };
  /** Name suffix so one namespace can hold several variants. */
  suffix?: string;
  /** Override the API server URL written to the kubeconfigs (e.g. a local proxy). */
  server?: string;
  /** Rules added to deploy/rbac.yaml's (e.g. what `berth serve --lease` needs for its Lease). */
  extraRules?: V1PolicyRule[];
}

export interface ServiceAccountAccess {
  namespace: string;
  serviceAccount: string;
  /** `system:serviceaccount:<ns>:<name>` */
  username: string;
  /** Kubeconfig with the token inline (context `berth-sa`). */
  kubeconfigPath: string;
  /** Kubeconfig whose user runs `execPluginPath` (an ExecCredential printer). */
  execKubeconfigPath: string;
  execPluginPath: string;
  /** Every run of the plugin appends one line here. */
  execPluginLog: string;
  /** Removes the temporary files (the objects go with the namespace). */
  cleanup(): Promise<void>;
}

/**
 * Applies deploy/rbac.yaml into `namespace` (as the admin `kc`) and returns kubeconfigs for the
 * ServiceAccount. Names get `suffix` so variants can live side by side.
 */
export async function createExecutorServiceAccount(kc: KubeConfig, namespace: string, opts: ServiceAccountOptions = {}): Promise<ServiceAccountAccess> {
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const objects = await loadRbac(namespace);
  const name = `${objects.serviceAccount.metadata?.name ?? 'berth-executor'}${opts.suffix ? `-${opts.suffix}` : ''}`;

  const role: V1Role = { ...objects.role, metadata: { ...objects.role.metadata, name } };
  if (opts.withoutVerb) {
    const { resource, verb } = opts.withoutVerb;
    const rules = (role.rules ?? []).map((r) => (r.resources?.includes(resource) ? { ...r, verbs: r.verbs.filter((v) => v !== verb) } : r));
    if (JSON.stringify(rules) === JSON.stringify(role.rules)) throw new Error(`deploy/rbac.yaml grants no ${verb} on ${resource}`);
    role.rules = rules;
  }
  if (opts.extraRules) role.rules = [...(role.rules ?? []), ...opts.extraRules];
  await core.createNamespacedServiceAccount({ namespace, body: { ...objects.serviceAccount, metadata: { ...objects.serviceAccount.metadata, name } } });
  await rbac.createNamespacedRole({ namespace, body: role });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      ...objects.roleBinding,
      metadata: { ...objects.roleBinding.metadata, name },
      roleRef: { ...objects.roleBinding.roleRef, name },
      subjects: (objects.roleBinding.subjects ?? []).map((s) => ({ ...s, name })),
    },
  });

  const expirationSeconds = 3600;
  const token = (await core.createNamespacedServiceAccountToken({ name, namespace, body: { spec: { audiences: [], expirationSeconds } } })).status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);

  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the admin kubeconfig has no current cluster');
  const caData = cluster.caData ?? (cluster.caFile ? (await readFile(cluster.caFile)).toString('base64') : undefined);
  const dir = await mkdtemp(join(tmpdir(), 'berth-sa-'));
  const clusters = [{ name: 'test', cluster: { server: opts.server ?? cluster.server, 'certificate-authority-data': caData } }];
  const contexts = [{ name: 'berth-sa', context: { cluster: 'test', user: name, namespace } }];

  const kubeconfigPath = join(dir, 'kubeconfig');
  await writeFile(
    kubeconfigPath,
    stringify({ apiVersion: 'v1', kind: 'Config', clusters, contexts, 'current-context': 'berth-sa', users: [{ name, user: { token } }] }),
    { mode: 0o600 },
  );

  const execPluginPath = join(dir, 'credential-plugin.sh');
  const execPluginLog = join(dir, 'credential-plugin.log');
  const credential = JSON.stringify({
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    status: { token, expirationTimestamp: new Date(Date.now() + (expirationSeconds - 60) * 1000).toISOString() },
  });
  await writeFile(execPluginPath, `#!/bin/sh\necho run >> '${execPluginLog}'\ncat <<'EOF'\n${credential}\nEOF\n`, { mode: 0o700 });
  await chmod(execPluginPath, 0o700);
  const execKubeconfigPath = join(dir, 'kubeconfig-exec');
  await writeFile(
    execKubeconfigPath,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters,
      contexts,
      'current-context': 'berth-sa',
      users: [{ name, user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: execPluginPath, args: [], interactiveMode: 'Never' } } }],
    }),
    { mode: 0o600 },
  );

  return {
    namespace,
    serviceAccount: name,
    username: `system:serviceaccount:${namespace}:${name}`,
    kubeconfigPath,
    execKubeconfigPath,
    execPluginPath,
    execPluginLog,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
