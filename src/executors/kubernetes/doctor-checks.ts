/**
 * `berth doctor` for Kubernetes executors, the pure half: which permissions a profile needs, and
 * how each outcome (a loaded kubeconfig, an API error, denied reviews, a dry-run answer) becomes
 * one check line with what to fix. No I/O: `doctor.ts` asks the cluster and calls these.
 * @module
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { EVENT_WRITE_ACCESS, EXECUTOR_ACCESS, KubeApiError, describeAccess, type AccessCheck, type AccessDenial } from './kube/index.js';
import { describeSwept, selectForSweep, type SweptObject } from './sweep-select.js';
import type { KubernetesConnection, TemplateWarning, WorkspaceMode } from './types.js';

/** One line of doctor's output. `warn`: a finding that does not fail doctor (exit code 0). */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
  warn?: boolean;
}

/** Where the permissions of the Role are written down, for fixes. */
const RBAC_MANIFEST = 'deploy/rbac.yaml';

const PVC = 'persistentvolumeclaims';

/**
 * The permissions the profiles of an executor need: pods, exec, port-forward and events always;
 * claims as the workspace modes require (managed_pvc: all, existing_claim: read and watch); `patch`
 * on pods with a managed claim (a new Pod waits behind a scheduling gate, lifted by a patch, while
 * its claim binds) or a pool (the labels of a claimed warm pool member), on claims only with a pool.
 * With no profile to go by, everything the executor can use.
 */
export function requiredAccess(modes: readonly WorkspaceMode[], opts: { pooled?: boolean; networked?: boolean } = {}): AccessCheck[] {
  const policies = opts.networked === true ? NETWORK_POLICY_ACCESS : [];
  if (modes.length === 0) return [...EXECUTOR_ACCESS, ...policies];
  const pvcVerbs = new Set<string>();
  for (const mode of modes) {
    if (mode === 'managed_pvc') for (const v of ['get', 'list', 'watch', 'create', 'delete', ...(opts.pooled === true ? ['patch'] : [])]) pvcVerbs.add(v);
    if (mode === 'existing_claim') for (const v of ['get', 'list', 'watch']) pvcVerbs.add(v);
  }
  const patchPods = opts.pooled === true || modes.includes('managed_pvc');
  return [...EXECUTOR_ACCESS.filter((c) => (c.resource === PVC ? pvcVerbs.has(c.verb) : c.verb !== 'patch' || patchPods)), ...policies];
}

/** What a profile with `network:` needs besides (deploy/rbac.yaml): its sessions' NetworkPolicies. */
const NETWORK_POLICY_ACCESS: readonly AccessCheck[] = ['get', 'list', 'create', 'delete'].map((verb) => ({ verb, resource: 'networkpolicies', group: 'networking.k8s.io' }));

/** Where the kubeconfig comes from, as the executor loads it (for the `kubeconfig` line). */
export function kubeconfigSource(connection: KubernetesConnection, env: NodeJS.ProcessEnv): string {
  if (connection.authMode === 'in_cluster') return 'in-cluster service account';
  if (connection.kubeconfigPath !== null) return connection.kubeconfigPath;
  if ((env.KUBECONFIG ?? '') !== '') return `$KUBECONFIG (${env.KUBECONFIG ?? ''})`;
  return '~/.kube/config';
}

const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME|SSL|TLS/i;

/** The fix for a call that did not get through to the API server (or was turned away at the door). */
export function connectionFix(err: unknown, where: { executor: string; context: string; server: string }): string {
  const e = err instanceof KubeApiError ? err : undefined;
  const ctl = `kubectl --context ${where.context} version`;
  if (e?.reason === 'Unauthorized') {
    return `the API server rejected the credentials of context "${where.context}": renew the token (or log in again for an exec plugin), then check with: kubectl --context ${where.context} auth whoami`;
  }
  if (e?.reason === 'NetworkError' && e.networkCode !== undefined && TLS_CODES.test(e.networkCode)) {
    return `the API server's certificate is not trusted: check certificate-authority(-data) of the cluster in the kubeconfig (check with: ${ctl})`;
  }
  if (e?.reason === 'NetworkError' || e?.reason === 'ClientTimeout') {
    return `nothing answers at ${where.server}: is the cluster running, and is that the right address (the cluster's server in the kubeconfig, context "${where.context}")? Check with: ${ctl}`;
  }
  return `check the cluster and the credentials of context "${where.context}" (executors.${where.executor} in berth.yaml); check with: ${ctl}`;
}

/**
 * The permissions line. `denied` empty: all granted. Otherwise it names exactly the denied
 * permissions and the rule to add, per resource.
 */
export function permissionsCheck(name: string, namespace: string, checked: readonly AccessCheck[], denied: readonly AccessDenial[], user: string | null): DoctorCheck {
  if (denied.length === 0) {
    return { name, ok: true, detail: `all ${checked.length} needed permissions granted in namespace ${namespace}${user ? ` to ${user}` : ''}` };
  }
  const byResource = new Map<string, string[]>();
  for (const d of denied) {
    const resource = d.subresource ? `${d.resource}/${d.subresource}` : d.resource;
    byResource.set(resource, [...(byResource.get(resource) ?? []), d.verb]);
  }
  const rules = [...byResource].map(([resource, verbs]) => `${verbs.map((v) => `"${v}"`).join(', ')} on "${resource}"`).join('; ');
  const reasons = denied.map((d) => d.reason).filter((r): r is string => r !== undefined);
  return {
    name,
    ok: false,
    detail: `${user ?? 'this identity'} may not ${denied.map(describeAccess).join(', ')} in namespace ${namespace}${reasons.length > 0 ? ` (${[...new Set(reasons)].join('; ')})` : ''}`,
    fix: `add ${rules} to the Role bound to it in namespace ${namespace}; ${RBAC_MANIFEST} is the complete Role: sed 's/BERTH_NAMESPACE/${namespace}/g' ${RBAC_MANIFEST} | kubectl apply -f -`,
  };
}

/**
 * The Events line, only when the identity may not write Events (events.k8s.io `create`): a warning,
 * since launches work without it but leave no Events on the session's objects. Null when granted.
 */
export function eventsWriteCheck(name: string, namespace: string, denied: boolean, user: string | null): DoctorCheck | null {
  if (!denied) return null;
  return {
    name,
    ok: true,
    warn: true,
    detail:
      `${user ?? 'this identity'} may not ${describeAccess(EVENT_WRITE_ACCESS)} in namespace ${namespace}: launches work, but Berth writes no Kubernetes Events ` +
      '(LaunchFailed, Replaced, Reaped) on the sessions\' Pods and claims, so kubectl describe pod and kubectl get events do not show them',
    fix: `add a rule with apiGroups ["events.k8s.io"], resources ["events"], verbs ["create"] to the Role bound to it in namespace ${namespace} (${RBAC_MANIFEST} has it)`,
  };
}

/** The storage-class line of a managed_pvc profile from the dry-run claim (no class set: the default the API server filled in). */
export function defaultClassCheck(name: string, profile: string, admitted: V1PersistentVolumeClaim): DoctorCheck {
  const cls = admitted.spec?.storageClassName;
  if (cls !== undefined && cls !== null && cls !== '') {
    return { name, ok: true, detail: `none set: the cluster's default "${cls}" (the API server set it on the dry-run claim)` };
  }
  return {
    name,
    ok: false,
    detail: 'none set and the cluster has no default StorageClass: the claim would stay Pending unless a PersistentVolume without a class matches it',
    fix: `set profiles.${profile}.kubernetes.workspace.storage_class (kubectl get storageclass), or mark a class as the default (annotation storageclass.kubernetes.io/is-default-class: "true")`,
  };
}

/** The fix for a refused dry-run create of the composed Pod or PVC. */
export function dryRunFix(err: unknown, kind: 'Pod' | 'PVC', where: { profile: string; namespace: string; executor: string }): string {
  const e = err instanceof KubeApiError ? err : undefined;
  const message = e?.message ?? '';
  const template = `profiles.${where.profile}.kubernetes.pod_template`;
  if (/violates PodSecurity "([a-z]+)/.test(message)) {
    const level = /violates PodSecurity "([a-z]+)/.exec(message)?.[1] ?? '';
    return `namespace ${where.namespace} enforces Pod Security "${level}": remove the settings named above from ${template}, or run these sessions in a namespace whose pod-security.kubernetes.io/enforce level allows them`;
  }
  if (/exceeded quota/i.test(message)) return `a ResourceQuota of namespace ${where.namespace} refuses it: lower the requests of ${template} (or workspace.size), or raise the quota`;
  if (/admission webhook/i.test(message)) return `an admission webhook of the cluster refuses it (named above): change ${template} to meet its policy, or ask the cluster's admins`;
  if (e?.reason === 'NotFound' && /namespace/i.test(message)) return `create the namespace (kubectl create namespace ${where.namespace}) or fix executors.${where.executor}.namespace`;
  if (e?.reason === 'Forbidden') return `grant "create" on "${kind === 'Pod' ? 'pods' : 'persistentvolumeclaims'}" (see the permissions check and ${RBAC_MANIFEST})`;
  if (e?.reason === 'Invalid' || e?.reason === 'BadRequest') return `the API server refuses the ${kind} as composed from profiles.${where.profile}.kubernetes: correct the field it names`;
  return `check the error above (the API server refused the dry run of the ${kind})`;
}

/** The fix when admission would change fields Berth owns (the launch's admission verification refuses that). */
export function admissionFix(kind: 'Pod' | 'PVC', profile: string): string {
  const subject = kind === 'Pod' ? "Berth's Pods" : "Berth's claims";
  return `defaulting or a mutating webhook changes the fields named above: remove the setting of profiles.${profile}.kubernetes that causes it, or exempt ${subject} (label app.kubernetes.io/managed-by=berth) from the webhook`;
}

/** One warn line per security warning of the template (spec §3.4), or an ok line when there are none. */
export function warningChecks(name: string, warnings: readonly TemplateWarning[]): DoctorCheck[] {
  if (warnings.length === 0) return [{ name, ok: true, detail: 'no setting of the Pod template weakens its isolation from the node' }];
  return warnings.map((w) => ({ name, ok: true, warn: true, detail: `${w.path}: ${w.message} (allowed; Berth does not strip it)` }));
}

/** Foreign objects named in one line at most; the rest are counted. */
const FOREIGN_LISTED = 5;

/**
 * The foreign-objects line: Pods and PVCs with Berth's labels in the namespace that this Berth
 * (installation id `installationId`; null: none yet) did not create. Its sweep never deletes them.
 * Doctor does not read the inventory, so this Berth's own objects from before installation ids
 * were stamped show up here too.
 */
export function foreignObjectsCheck(name: string, namespace: string, objects: readonly SweptObject[], installationId: string | null): DoctorCheck {
  const ctx = { installationId: installationId ?? '', isRecorded: () => false, serverNow: new Date(0), minAgeMs: 0 };
  const foreign = objects.flatMap((o) => {
    const v = selectForSweep(o, ctx);
    return v.action === 'report' ? [`${describeSwept(o)}: ${v.why}`] : [];
  });
  if (foreign.length === 0) return { name, ok: true, detail: `none: every Pod and PVC with Berth's labels in namespace ${namespace} was created by this Berth` };
  const listed = foreign.slice(0, FOREIGN_LISTED).join('; ');
  const more = foreign.length > FOREIGN_LISTED ? `; and ${foreign.length - FOREIGN_LISTED} more` : '';
  return {
    name,
    ok: true,
    warn: true,
    detail:
      `${foreign.length} object${foreign.length === 1 ? '' : 's'} with Berth's labels in namespace ${namespace} ${foreign.length === 1 ? 'was' : 'were'} not created by this Berth, ` +
      `which leaves ${foreign.length === 1 ? 'it' : 'them'} alone (delete ${foreign.length === 1 ? 'it' : 'them'} yourself once nobody uses ${foreign.length === 1 ? 'it' : 'them'}): ${listed}${more}`,
  };
}
