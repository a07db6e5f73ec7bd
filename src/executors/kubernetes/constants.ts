/**
 * Every name the Kubernetes executor owns: labels, annotations, volumes, paths, ports, environment
 * keys, stages, checkpoint states and inventory metadata keys. Reserved-field checks (template
 * validation, admission verification) are built from these same constants (STYLE E8).
 * @module
 */

/** Prefix of Berth's own labels and annotations; any key under it on a template is reserved. */
export const BERTH_KEY_PREFIX = 'berth.dev/';

/** Ownership labels put on every Pod and managed PVC (spec §3.3, Berth's names). */
export const LABEL = {
  name: 'app.kubernetes.io/name',
  component: 'app.kubernetes.io/component',
  managedBy: 'app.kubernetes.io/managed-by',
  instance: 'app.kubernetes.io/instance',
  instanceId: 'berth.dev/instance-id',
  sessionId: 'berth.dev/session-id',
  executor: 'berth.dev/executor',
  profile: 'berth.dev/profile',
} as const;

/** Fixed values of the `app.kubernetes.io/*` ownership labels. */
export const LABEL_VALUE = {
  name: 'berth-agent',
  component: 'agent-session',
  managedBy: 'berth',
} as const;

/** The `app.kubernetes.io/*` label keys a template may not set (Berth owns them). */
export const RESERVED_APP_LABELS: readonly string[] = [LABEL.name, LABEL.component, LABEL.managedBy, LABEL.instance];

export const ANNOTATION = {
  /** A fresh 256-bit hex value per create: proves an object found after an ambiguous create is ours (spec §3.7). */
  createNonce: 'berth.dev/create-nonce',
  /**
   * The installation id of the Berth (data dir) that created the object: its sweep deletes only
   * unrecorded objects carrying its own (see sweep.ts); others are reported, never deleted.
   */
  installation: 'berth.dev/installation',
} as const;

/**
 * The scheduling gate (`spec.schedulingGates`) a Pod on a new managed claim is created with: the
 * Pod is created while the claim binds and is scheduled only once Berth lifts the gate (launch/gate.ts).
 */
export const SCHEDULING_GATE = 'berth.dev/workspace-claim';

/** Reserved volumes (spec §3.2) and where the main container mounts them. */
export const VOLUME = {
  runtime: 'berth-runtime',
  auth: 'berth-auth',
  workspace: 'berth-workspace',
} as const;

export const PATH = {
  /** Runtime emptyDir: agentctl, runtime.env, prepare.sh, markers. */
  runtimeDir: '/opt/berth',
  /** Memory-backed emptyDir: auth.env, credentials, the private HOME. */
  authDir: '/run/berth',
  workspace: '/workspace',
  agentctl: '/opt/berth/agentctl',
  runtimeEnv: '/opt/berth/runtime.env',
  prepareScript: '/opt/berth/prepare.sh',
  startMarker: '/opt/berth/start',
  preparedMarker: '/opt/berth/prepared',
  /** Written by a bootstrap exec that runs prepare.sh itself: the start command then leaves prepare to it. */
  prepareInExecMarker: '/opt/berth/prepare.exec',
  authEnv: '/run/berth/auth.env',
  /** agentctl's bootstrap nonce: agentctl reads it and removes it at start (never an env variable). */
  nonceFile: '/run/berth/nonce',
  home: '/run/berth/home',
  /** The single-file agentctl bundle, run with the image's `node` (the SEA binary is `agentctl`). */
  agentctlBundle: '/opt/berth/agentctl.cjs',
  /** Optional launcher script that runs the delivered agentctl build; the start command prefers it. */
  agentctlLauncher: '/opt/berth/bin/agentctl',
  /** Output of the last prepare.sh run, read by the executor when the launch fails. */
  prepareLog: '/opt/berth/prepare.log',
  /** Exit status of the last failed prepare.sh run (absent after a success). */
  prepareFailed: '/opt/berth/prepare.failed',
  /** A local-path repository, streamed in as a `git bundle` and cloned by prepare.sh. */
  repoBundle: '/opt/berth/repo.bundle',
  /** git credential helper: answers `get` from {@link PATH.gitCredentials} (not secret itself). */
  gitCredentialHelper: '/opt/berth/git-credential-helper',
  /** The https clone credential in git's credential format; memory-backed, removed after the clone. */
  gitCredentials: '/run/berth/git-credentials',
} as const;

/** Variables of runtime.env Berth owns besides agentctl's own `AGENTCTL_*` (spec §5.4, Berth's names). */
export const BERTH_ENV = {
  sessionId: 'BERTH_SESSION_ID',
  instanceId: 'BERTH_INSTANCE_ID',
  workspace: 'BERTH_WORKSPACE',
  /** `bundle` or `sea`: which agentctl build the start command execs. */
  agentctlFlavor: 'BERTH_AGENTCTL_FLAVOR',
} as const;

/** Where agentctl keeps process records and output: on the workspace volume, so it survives Pod replacement. */
export const AGENTCTL_STATE_DIR = '/workspace/.agentctl/state';
/** Default grace period of a Berth Pod: agentctl stops the agent itself before the Pod is deleted. */
export const DEFAULT_TERMINATION_GRACE_SECONDS = 5;
/** uid/gid/fsGroup given to a template that says nothing about the user (see compose/secure-defaults.ts). */
export const DEFAULT_POD_UID = 1000;

/** Mount paths at or below which a template may not mount anything. */
export const RESERVED_MOUNT_PATHS: readonly string[] = [PATH.runtimeDir, PATH.authDir, PATH.workspace];

export const AGENTCTL_PORT = 8765;
export const AGENTCTL_PORT_NAME = 'berth-agentctl';
/** Instance ports agentctl may allocate inside the Pod. */
export const AGENTCTL_INSTANCE_PORTS = '41001-41100';

/** Env names no container of a template may set (exact names and prefixes). */
export const RESERVED_ENV_NAMES: readonly string[] = ['HOME'];
export const RESERVED_ENV_PREFIXES: readonly string[] = ['AGENTCTL_', 'BERTH_'];

export const DEFAULT_MAIN_CONTAINER = 'agent';
export const DEFAULT_NAMESPACE = 'default';
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 30;
export const USER_AGENT = 'berth-kubernetes-executor';
/** Largest accepted pod template text (spec §3.1). */
export const MAX_TEMPLATE_BYTES = 256 * 1024;

/** Launch stages, in order. */
export const STAGE = {
  storage: 'storage',
  podReady: 'pod_ready',
  bootstrap: 'bootstrap',
  agentctlConnect: 'agentctl_connect',
} as const;

/** Provisional checkpoint states; `ready` is written by the manager once the secrets are durable. */
export const CHECKPOINT = {
  /** Written before the PVC create: a crash from here on finds the claim by name and create-nonce digest. */
  pvcCreating: 'pvc_creating',
  pvcCreated: 'pvc_created',
  pvcAdmitted: 'pvc_admitted',
  /** Written before the Pod create (fresh or replacement), the same way. */
  podCreating: 'pod_creating',
  podCreated: 'pod_created',
  podAdmitted: 'pod_admitted',
  bootstrapped: 'bootstrapped',
  /** A warm launch: the claimed pool member's Pod and PVC, relabelled, are the session's (pool/claim.ts). */
  poolClaimed: 'pool_claimed',
  agentctlConnected: 'agentctl_connected',
} as const;

/** Runtime metadata keys (the `kubernetes_` prefix passes the inventory filter; spec §4.1). */
export const META = {
  namespace: 'kubernetes_namespace',
  mainContainer: 'kubernetes_main_container',
  platform: 'kubernetes_platform',
  workspaceMode: 'kubernetes_workspace_mode',
  podName: 'kubernetes_pod_name',
  podUid: 'kubernetes_pod_uid',
  pvcName: 'kubernetes_pvc_name',
  pvcUid: 'kubernetes_pvc_uid',
  pvcCreated: 'kubernetes_pvc_created',
  remotePort: 'kubernetes_agentctl_remote_port',
  restartCount: 'kubernetes_container_restart_count',
  profileHash: 'kubernetes_profile_config_hash',
  executorConfigHash: 'kubernetes_executor_config_hash',
  templateHash: 'kubernetes_template_hash',
  /** Which agentctl build was delivered: `bundle` (Node >= 18 in the image) or `sea`. */
  agentctlFlavor: 'kubernetes_agentctl_flavor',
  /**
   * In `pvc_creating` / `pod_creating`: the SHA-256 of the create-nonce annotation of the object
   * being created (not the nonce itself), so a crash before its UID is recorded still finds it.
   */
  pendingCreateDigest: 'kubernetes_pending_create_digest',
  /**
   * `true` once a stop deleted the recorded Pod gracefully and saw it gone: the kubelet had stopped
   * its containers and unmounted its volumes first. Dropped when a new Pod is created.
   */
  podReclaimed: 'kubernetes_pod_reclaimed',
  /** The session's NetworkPolicy (a profile with `network:`): recorded with the Pod create that follows it. */
  policyName: 'kubernetes_network_policy_name',
  policyUid: 'kubernetes_network_policy_uid',
  resourceInstanceId: 'kubernetes_resource_instance_id',
  resourceSessionId: 'kubernetes_resource_session_id',
  resourceExecutor: 'kubernetes_resource_executor',
  resourceProfile: 'kubernetes_resource_profile',
  instanceId: 'agentctl_instance_id',
  state: 'inventory_state',
} as const;
