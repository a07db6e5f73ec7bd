/**
 * The connection of a `kubernetes` executor entry (spec §2.1): how to reach the cluster and where
 * new sessions go. Values arrive schema-checked for type; the rules here are the ones a schema
 * cannot say (auth-mode exclusions, DNS names, bounds), with defaults from `defaults.ts`.
 * @module
 */
import { isAbsolute } from 'node:path';
import type { AuthMode, KubernetesConnection } from '../types.js';
import { CONNECTION_DEFAULTS, REQUEST_TIMEOUT_MAX_SECONDS, REQUEST_TIMEOUT_MIN_SECONDS } from './defaults.js';
import { ConfigFieldError } from '../../../shared/config-field-error.js';
import { isDns1123Label } from './identifiers.js';
import { field } from './paths.js';

/** The executor entry's fields; paths must already be resolved against the config file. */
export interface KubernetesConnectionInput {
  authMode?: string | undefined;
  kubeconfigPath?: string | null | undefined;
  kubeContext?: string | null | undefined;
  namespace?: string | undefined;
  requestTimeoutSeconds?: number | undefined;
}

/**
 * Validates and completes a connection. `path` is the executor entry (`executors.cluster`); every
 * error names the field under it (`executors.cluster.namespace: must be a valid Kubernetes namespace`).
 */
export function parseKubernetesConnection(input: KubernetesConnectionInput, path: string, file: string | null = null): KubernetesConnection {
  const fail = (key: string, detail: string) => new ConfigFieldError(field(path, key), detail, file);
  const authMode = input.authMode?.trim() ?? CONNECTION_DEFAULTS.authMode;
  if (authMode !== 'kubeconfig' && authMode !== 'in_cluster') throw fail('auth_mode', 'must be kubeconfig or in_cluster');
  const kubeconfigPath = blankToNull(input.kubeconfigPath);
  const kubeContext = blankToNull(input.kubeContext);
  if (authMode === 'in_cluster') {
    // the service account's own token, CA and endpoint are used; a path or context would be ignored silently
    if (kubeconfigPath !== null) throw fail('kubeconfig_path', 'must be empty for in-cluster auth');
    if (kubeContext !== null) throw fail('kube_context', 'must be empty for in-cluster auth');
  } else if (kubeconfigPath !== null && !isAbsolute(kubeconfigPath)) {
    throw fail('kubeconfig_path', 'must be an absolute path for kubeconfig auth');
  }
  const namespace = input.namespace?.trim() ?? CONNECTION_DEFAULTS.namespace;
  if (!isDns1123Label(namespace)) throw fail('namespace', 'must be a valid Kubernetes namespace');
  const timeout = input.requestTimeoutSeconds ?? CONNECTION_DEFAULTS.requestTimeoutSeconds;
  if (!Number.isInteger(timeout)) throw fail('request_timeout_seconds', 'must be an integer');
  if (timeout < REQUEST_TIMEOUT_MIN_SECONDS || timeout > REQUEST_TIMEOUT_MAX_SECONDS) {
    throw fail('request_timeout_seconds', `must be between ${REQUEST_TIMEOUT_MIN_SECONDS} and ${REQUEST_TIMEOUT_MAX_SECONDS}`);
  }
  return { authMode: authMode satisfies AuthMode, kubeconfigPath, kubeContext, namespace, requestTimeoutSeconds: timeout };
}

function blankToNull(value: string | null | undefined): string | null {
  const trimmed = value?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}
