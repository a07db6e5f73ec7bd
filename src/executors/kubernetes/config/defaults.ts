/**
 * Every default of the Kubernetes executor's configuration, in one place. `berth.yaml` may leave
 * any of these out; the profile snapshot always records the resolved value, so a later change of a
 * default never changes the Pods of an existing session.
 * @module
 */
import type { AccessMode, AuthMode, Platform, WaitBudgets, WorkspaceMode } from '../types.js';
import { DEFAULT_MAIN_CONTAINER, DEFAULT_NAMESPACE, DEFAULT_REQUEST_TIMEOUT_SECONDS } from '../constants.js';

export const CONNECTION_DEFAULTS = {
  /** A kubeconfig file: the way a user on a workstation reaches a cluster. */
  authMode: 'kubeconfig' as AuthMode,
  namespace: DEFAULT_NAMESPACE,
  requestTimeoutSeconds: DEFAULT_REQUEST_TIMEOUT_SECONDS,
} as const;

export const PROFILE_DEFAULTS = {
  /** The most common node architecture. */
  platform: 'linux/amd64' as Platform,
  mainContainer: DEFAULT_MAIN_CONTAINER,
  /** A PVC per session: the work survives a stop and a lost Pod. */
  workspaceMode: 'managed_pvc' as WorkspaceMode,
  /** managed_pvc only. */
  workspaceSize: '10Gi',
  /** managed_pvc only; one node at a time is all a session needs and every provisioner offers it. */
  accessModes: ['ReadWriteOnce'] as readonly AccessMode[],
  setupScript: '',
  cleanupScript: '',
} as const;

/**
 * The `pod_ready` wait budgets and the `bootstrap` step budgets. Generous enough for a cold image
 * pull of a few hundred MB and a provisioner that binds volumes lazily; each failure still reports
 * the reason it was waiting on (or the bootstrap step that did not finish).
 */
export const BUDGET_DEFAULTS: Readonly<WaitBudgets> = {
  pvcBindingSeconds: 120,
  schedulingSeconds: 60,
  imagePullSeconds: 300,
  containerStartSeconds: 120,
  /** agentctl is tens of MB at most: minutes only on a very slow link. */
  uploadSeconds: 300,
  /** As the local executor's clone: 10 minutes. */
  cloneSeconds: 600,
  setupScriptSeconds: 600,
};

/** Bounds of every wait budget (seconds). */
export const BUDGET_MIN_SECONDS = 1;
export const BUDGET_MAX_SECONDS = 3600;

/** Bounds of `request_timeout_seconds` (spec §2.1). */
export const REQUEST_TIMEOUT_MIN_SECONDS = 1;
export const REQUEST_TIMEOUT_MAX_SECONDS = 300;
