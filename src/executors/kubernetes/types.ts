/**
 * The parsed shapes the Kubernetes executor works with: the connection (executor entry of
 * berth.yaml) and the profile (`profiles.<name>.kubernetes`). Produced by `config/` (pure
 * validation, field paths in errors), consumed by `compose/` (pure) and the launch stages (I/O).
 * @module
 */
import type { V1PodTemplateSpec } from '@kubernetes/client-node';

export type Platform = 'linux/amd64' | 'linux/arm64';
export type AuthMode = 'kubeconfig' | 'in_cluster';
export type WorkspaceMode = 'managed_pvc' | 'empty_dir' | 'existing_claim';
export type AccessMode = 'ReadWriteOnce' | 'ReadOnlyMany' | 'ReadWriteMany' | 'ReadWriteOncePod';

/** How to reach the cluster (the executor entry). Secrets never live here: a kubeconfig is read from its file. */
export interface KubernetesConnection {
  authMode: AuthMode;
  /** Kubeconfig mode: the file; null → `$KUBECONFIG`, else `~/.kube/config`. Always null for in_cluster. */
  kubeconfigPath: string | null;
  kubeContext: string | null;
  /** Namespace of new sessions (a recorded session keeps the namespace it was created in). */
  namespace: string;
  requestTimeoutSeconds: number;
}

export interface WorkspaceConfig {
  mode: WorkspaceMode;
  /** managed_pvc only: a positive Kubernetes quantity (`10Gi`). */
  size: string | null;
  /** managed_pvc only; null → the cluster's default StorageClass. */
  storageClass: string | null;
  /** managed_pvc only; defaults to [ReadWriteOnce]. Empty for the other modes. */
  accessModes: AccessMode[];
  /** existing_claim only. */
  claimName: string | null;
}

/**
 * Separate wait budgets of the `pod_ready` stage (an improvement on the spec's single 30 s deadline):
 * each phase fails with its current reason when its own budget runs out; and of each step of the
 * `bootstrap` stage, which fails naming the step.
 */
export interface WaitBudgets {
  /** PVC Pending → Bound (managed_pvc / existing_claim). */
  pvcBindingSeconds: number;
  /** Pod created → PodScheduled=True. */
  schedulingSeconds: number;
  /** Scheduled → image present (pulling counts here). */
  imagePullSeconds: number;
  /** Image present → the main container accepts an exec. */
  containerStartSeconds: number;
  /** `bootstrap`: the upload of agentctl and the bootstrap files, until the start marker is written. */
  uploadSeconds: number;
  /** `bootstrap`: the clone of the repository (a local repository's bundle included). */
  cloneSeconds: number;
  /** `bootstrap`: the profile's `setup_script`. */
  setupScriptSeconds: number;
}

/** A validated `profiles.<name>.kubernetes` block. */
export interface KubernetesProfile {
  platform: Platform;
  mainContainer: string;
  /** The parsed template (`metadata` + `spec`), strictly checked, never mutated by composition. */
  template: V1PodTemplateSpec;
  /** The template text as written (hashed into the inventory, kept in the profile snapshot). */
  templateText: string;
  workspace: WorkspaceConfig;
  /** Runs once in /workspace after the clone (empty: none). */
  setupScript: string;
  /** Runs in the Pod before a destroy (empty: none). */
  cleanupScript: string;
  budgets: WaitBudgets;
}

/** A non-fatal security finding about a template (spec §3.4), shown by `berth doctor` and at launch. */
export interface TemplateWarning {
  /** Field path, e.g. `profiles.k8s.kubernetes.pod_template.spec.hostNetwork`. */
  path: string;
  message: string;
}
