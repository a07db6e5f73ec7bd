/**
 * `berth doctor` for a Kubernetes executor and its profiles: loads the kubeconfig, asks the API
 * server its version, reads the namespace where it may, checks every needed permission by
 * SelfSubjectAccessReview (and warns when Events cannot be written, which launches do not need),
 * and per profile lists the template's security warnings, checks the workspace's storage (the
 * storage class of a managed claim, or the existing claim) and dry-runs (server side: admission,
 * Pod Security, quotas, webhooks; nothing is stored) the PVC and Pod a launch would create,
 * composed exactly as the launch composes them. A check that cannot run because an earlier one
 * failed is left out; the failed one says so.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { errorMessage } from '../../shared/errors.js';
import { sanitize } from '../../shared/sanitize.js';
import { podAdmissionProblems, pvcAdmissionProblems, resourceNames, type RandomSource } from './compose/index.js';
import { templateWarnings } from './config/index.js';
import {
  admissionFix,
  connectionFix,
  defaultClassCheck,
  dryRunFix,
  eventsWriteCheck,
  foreignObjectsCheck,
  kubeconfigSource,
  permissionsCheck,
  requiredAccess,
  warningChecks,
  type DoctorCheck,
} from './doctor-checks.js';
import {
  createKubeClient,
  createPod,
  createPvc,
  deniedAccess,
  EVENT_WRITE_ACCESS,
  getNamespace,
  getPvc,
  getStorageClass,
  isForbidden,
  isNotFound,
  kubePorts,
  selfSubjectUser,
  serverVersion,
  type KubeClient,
} from './kube/index.js';
import { desiredPod, desiredPvc, type DesiredInput } from './launch/desired.js';
import { listBerthObjects } from './sweep.js';
import type { KubernetesConnection, KubernetesProfile, WorkspaceMode } from './types.js';


interface DoctorProfile {
  name: string;
  profile: KubernetesProfile;
  /** It has a warm pool (its claims relabel Pods and PVCs). */
  pooled?: boolean;
  /** It has `network:` settings (its sessions get a NetworkPolicy). */
  networked?: boolean;
}

/** An executor entry and the profiles of it to check (none: the connection only). */
export interface DoctorTarget {
  executor: string;
  connection: KubernetesConnection;
  profiles: readonly DoctorProfile[];
  /** Workspace modes whose permissions to check. @default those of `profiles` (none: all the executor can use) */
  workspaceModes?: readonly WorkspaceMode[];
  /** With `workspaceModes`: one of its profiles has a warm pool. */
  pooled?: boolean;
  /** With `workspaceModes`: one of its profiles has `network:` settings. */
  networked?: boolean;
}

interface KubernetesDoctorOptions {
  /** Where `$KUBECONFIG` and `$HOME` are read from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Caps the executor's request timeout (a quick check of every executor). */
  maxRequestTimeoutSeconds?: number;
  random?: RandomSource;
  signal?: AbortSignal;
  /** The data dir's installation id (null: none yet): objects with Berth's labels without it are listed as foreign. */
  installationId?: string | null;
}

interface Run {
  client: KubeClient;
  target: DoctorTarget;
  random: RandomSource;
  signal: AbortSignal | undefined;
  installationId: string | null;
}

/** Every check of `target`, in order. Never throws: a failure is a failed check with its fix. */
export async function kubernetesDoctor(target: DoctorTarget, opts: KubernetesDoctorOptions = {}): Promise<DoctorCheck[]> {
  const env = opts.env ?? process.env;
  const exec = target.executor;
  const name = (what: string): string => `${exec}: ${what}`;
  const cap = opts.maxRequestTimeoutSeconds;
  const connection = cap === undefined ? target.connection : { ...target.connection, requestTimeoutSeconds: Math.min(target.connection.requestTimeoutSeconds, cap) };
  let client: KubeClient;
  try {
    client = createKubeClient(connection, { env });
  } catch (err) {
    return [{ name: name('kubeconfig'), ok: false, detail: `${errorMessage(err)} (later checks skipped)`, fix: `correct executors.${exec} in berth.yaml (kubeconfig_path, kube_context, auth_mode) or the kubeconfig itself` }];
  }
  const server = sanitize(client.server);
  const checks: DoctorCheck[] = [{ name: name('kubeconfig'), ok: true, detail: `${kubeconfigSource(target.connection, env)}: context "${client.contextName}", server ${server}` }];
  const where = { executor: exec, context: client.contextName, server };
  const signal = opts.signal;

  let version;
  try {
    version = await serverVersion(client, signal);
  } catch (err) {
    checks.push({ name: name('api server'), ok: false, detail: `${errorMessage(err)} (later checks skipped)`, fix: connectionFix(err, where) });
    return checks;
  }
  const user = await whoami(client, signal);
  checks.push({ name: name('api server'), ok: true, detail: `Kubernetes ${version.gitVersion} (${version.platform}) at ${server}${user ? `, as ${user}` : ''}` });

  const namespace = connection.namespace;
  checks.push(await namespaceCheck(client, name('namespace'), target, signal));
  const needed = requiredAccess(target.workspaceModes ?? target.profiles.map((p) => p.profile.workspace.mode), {
    pooled: (target.pooled ?? false) || target.profiles.some((p) => p.pooled === true),
    networked: (target.networked ?? false) || target.profiles.some((p) => p.networked === true),
  });
  try {
    checks.push(permissionsCheck(name('permissions'), namespace, needed, await deniedAccess(client, namespace, needed, signal), user));
  } catch (err) {
    checks.push({ name: name('permissions'), ok: false, detail: errorMessage(err), fix: connectionFix(err, where) });
  }
  checks.push(...(await eventsCheck(client, name('events'), namespace, user, signal)));
  checks.push(await foreignCheck(client, name('foreign objects'), namespace, opts.installationId ?? null, signal));

  const run: Run = { client, target, random: opts.random ?? ((n) => randomBytes(n)), signal, installationId: opts.installationId ?? null };
  const perProfile = await Promise.all(target.profiles.map((p) => profileChecks(run, p)));
  return [...checks, ...perProfile.flat()];
}

/** Objects with Berth's labels in the namespace that this Berth did not create (its sweep only reports them). */
async function foreignCheck(client: KubeClient, name: string, namespace: string, installationId: string | null, signal: AbortSignal | undefined): Promise<DoctorCheck> {
  const objects = [];
  for (const kind of ['Pod', 'PVC'] as const) {
    try {
      objects.push(...(await listBerthObjects({ objects: kubePorts(client).objects }, kind, namespace, signal ?? AbortSignal.timeout(client.requestTimeoutMs))).objects);
    } catch (err) {
      if (kind === 'PVC' && isForbidden(err)) continue; // no managed claims without the permission
      return { name, ok: true, warn: true, detail: `not checked: ${errorMessage(err)}` };
    }
  }
  return foreignObjectsCheck(name, namespace, objects, installationId);
}

/** A warning when the identity may not write Events (none when it may, or when the review cannot be made: the permissions line says why). */
async function eventsCheck(client: KubeClient, name: string, namespace: string, user: string | null, signal: AbortSignal | undefined): Promise<DoctorCheck[]> {
  try {
    const check = eventsWriteCheck(name, namespace, (await deniedAccess(client, namespace, [EVENT_WRITE_ACCESS], signal)).length > 0, user);
    return check === null ? [] : [check];
  } catch {
    return [];
  }
}

/** The authenticated user name (SelfSubjectReview, Kubernetes >= 1.28), or null when it cannot be asked. */
async function whoami(client: KubeClient, signal: AbortSignal | undefined): Promise<string | null> {
  try {
    return await selfSubjectUser(client, signal);
  } catch {
    return null;
  }
}

/** Reads the namespace when the identity may (Berth's Role does not need to); else says what was and was not checked. */
async function namespaceCheck(client: KubeClient, name: string, target: DoctorTarget, signal: AbortSignal | undefined): Promise<DoctorCheck> {
  const ns = target.connection.namespace;
  let readable: boolean;
  try {
    readable = (await deniedAccess(client, ns, [{ verb: 'get', resource: 'namespaces' }], signal)).length === 0;
  } catch (err) {
    return { name, ok: false, detail: errorMessage(err), fix: `check that the API server answers (see the api server check)` };
  }
  if (!readable) {
    const instead =
      target.profiles.length > 0
        ? 'whether it exists and what its Pod Security allows is shown by the dry-run creates below'
        : `not checked whether it exists (berth doctor --executor PROFILE dry-runs a create in it)`;
    return { name, ok: true, detail: `${ns}: not read (this identity may not get namespaces, which Berth does not need); ${instead}` };
  }
  try {
    const obj = await getNamespace(client, ns, signal);
    if (obj.metadata?.deletionTimestamp || obj.status?.phase === 'Terminating') {
      return { name, ok: false, detail: `namespace ${ns} is being deleted`, fix: `wait until it is gone and create it again, or set executors.${target.executor}.namespace to another one` };
    }
    const level = obj.metadata?.labels?.['pod-security.kubernetes.io/enforce'];
    return { name, ok: true, detail: `${ns} exists (Pod Security enforce: ${level ?? 'not set'})` };
  } catch (err) {
    if (isNotFound(err)) {
      return { name, ok: false, detail: `namespace ${ns} does not exist`, fix: `create it (kubectl create namespace ${ns}) or set executors.${target.executor}.namespace to an existing one` };
    }
    return { name, ok: false, detail: errorMessage(err), fix: 'check the error above' };
  }
}

/** Warnings, storage and the dry-run creates of one profile. */
async function profileChecks(run: Run, p: DoctorProfile): Promise<DoctorCheck[]> {
  const name = (what: string): string => `${p.name}: ${what}`;
  const { client, target, signal } = run;
  const namespace = target.connection.namespace;
  const where = { profile: p.name, namespace, executor: target.executor };
  const checks: DoctorCheck[] = [];
  let warnings;
  try {
    warnings = templateWarnings(p.profile, `profiles.${p.name}.kubernetes.pod_template`);
  } catch (err) {
    return [{ name: name('template'), ok: false, detail: errorMessage(err), fix: `correct profiles.${p.name}.kubernetes.pod_template` }];
  }
  checks.push(...warningChecks(name('security'), warnings));

  const identity = { instanceId: `doctor-${Buffer.from(run.random(3)).toString('hex')}`, sessionId: 'doctor', executor: target.executor, profile: p.name };
  const input: DesiredInput = { profile: p.profile, identity, namespace, random: run.random, installationId: run.installationId };
  const names = resourceNames(identity.instanceId);
  const ws = p.profile.workspace;
  if (ws.mode === 'managed_pvc') {
    try {
      const desired = desiredPvc(input);
      const admitted = await createPvc(client, namespace, desired, { dryRun: true, ...(signal ? { signal } : {}) });
      const problems = pvcAdmissionProblems(desired, admitted);
      checks.push(
        problems.length === 0
          ? { name: name('dry-run pvc'), ok: true, detail: `the API server admits the claim (${ws.size ?? '?'}, ${(desired.spec?.accessModes ?? []).join(',')}; nothing was created)` }
          : { name: name('dry-run pvc'), ok: false, detail: `the API server would change the claim, and a launch fails on that: ${[...new Set(problems)].join('; ')}`, fix: admissionFix('PVC', p.name) },
      );
      checks.push(ws.storageClass === null ? defaultClassCheck(name('storage class'), p.name, admitted) : await namedClassCheck(run, name('storage class'), p.name, ws.storageClass));
    } catch (err) {
      checks.push({ name: name('dry-run pvc'), ok: false, detail: errorMessage(err), fix: dryRunFix(err, 'PVC', where) });
    }
  } else if (ws.mode === 'existing_claim') {
    checks.push(await claimCheck(run, name('claim'), p.name, ws.claimName ?? ''));
  }

  try {
    // behind the scheduling gate on a managed claim, as a launch creates it while its claim binds
    const desired = desiredPod(input, names.pod, ws.mode === 'managed_pvc' ? names.pvc : null, { schedulingGate: ws.mode === 'managed_pvc' });
    const admitted = await createPod(client, namespace, desired, { dryRun: true, ...(signal ? { signal } : {}) });
    const problems = podAdmissionProblems(desired, admitted, { mainContainer: p.profile.mainContainer });
    checks.push(
      problems.length === 0
        ? { name: name('dry-run pod'), ok: true, detail: `the API server admits the Pod as a launch composes it (admission, Pod Security, quotas; nothing was created)` }
        : { name: name('dry-run pod'), ok: false, detail: `the API server would change the Pod, and a launch fails on that: ${[...new Set(problems)].join('; ')}`, fix: admissionFix('Pod', p.name) },
    );
  } catch (err) {
    checks.push({ name: name('dry-run pod'), ok: false, detail: errorMessage(err), fix: dryRunFix(err, 'Pod', where) });
  }
  return checks;
}

/** An explicit storage class: read it when the identity may (cluster-scoped; Berth's Role cannot), else say it was not verified. */
async function namedClassCheck(run: Run, name: string, profile: string, cls: string): Promise<DoctorCheck> {
  const { client, signal } = run;
  try {
    const readable = (await deniedAccess(client, '', [{ verb: 'get', resource: 'storageclasses', group: 'storage.k8s.io' }], signal)).length === 0;
    if (!readable) {
      return { name, ok: true, detail: `"${cls}": not verified (this identity may not read StorageClasses, which Berth does not need); a class that does not exist leaves the claim Pending, which a launch reports` };
    }
    const sc = await getStorageClass(client, cls, signal);
    return { name, ok: true, detail: `"${cls}" exists (provisioner ${sc.provisioner}, binding ${sc.volumeBindingMode ?? 'Immediate'})` };
  } catch (err) {
    if (isNotFound(err)) {
      return {
        name,
        ok: false,
        detail: `storage class "${cls}" does not exist`,
        fix: `set profiles.${profile}.kubernetes.workspace.storage_class to an existing class (kubectl get storageclass), or leave it out to use the cluster's default`,
      };
    }
    return { name, ok: false, detail: errorMessage(err), fix: 'check the error above' };
  }
}

/** existing_claim: the claim exists and is not being deleted (Berth only reads it). */
async function claimCheck(run: Run, name: string, profile: string, claimName: string): Promise<DoctorCheck> {
  const ns = run.target.connection.namespace;
  try {
    const claim = await getPvc(run.client, ns, claimName, run.signal);
    if (claim === undefined) {
      return { name, ok: false, detail: `claim ${ns}/${claimName} does not exist`, fix: `create it, or fix profiles.${profile}.kubernetes.workspace.claim_name` };
    }
    if (claim.metadata?.deletionTimestamp) return { name, ok: false, detail: `claim ${ns}/${claimName} is being deleted`, fix: `use another claim in profiles.${profile}.kubernetes.workspace.claim_name` };
    return { name, ok: true, detail: `${ns}/${claimName} exists (${claim.status?.phase ?? 'unknown phase'}${claim.spec?.storageClassName ? `, storage class ${claim.spec.storageClassName}` : ''})` };
  } catch (err) {
    return { name, ok: false, detail: errorMessage(err), fix: 'grant "get" on "persistentvolumeclaims" (see the permissions check)' };
  }
}
