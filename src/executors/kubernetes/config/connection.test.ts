import { describe, expect, it } from 'vitest';
import { parseKubernetesConnection, type KubernetesConnectionInput } from './connection.js';
import { ConfigFieldError } from '../../../shared/config-field-error.js';

const E = 'executors.cluster';

describe('parseKubernetesConnection', () => {
  it('defaults to kubeconfig auth ($KUBECONFIG / ~/.kube/config), namespace default and a 30 s timeout', () => {
    expect(parseKubernetesConnection({}, E)).toEqual({
      authMode: 'kubeconfig',
      kubeconfigPath: null,
      kubeContext: null,
      namespace: 'default',
      requestTimeoutSeconds: 30,
    });
  });

  it('keeps every field given, trimmed', () => {
    expect(
      parseKubernetesConnection({ authMode: 'kubeconfig', kubeconfigPath: ' /etc/kube/config ', kubeContext: ' prod ', namespace: ' agents ', requestTimeoutSeconds: 300 }, E),
    ).toEqual({ authMode: 'kubeconfig', kubeconfigPath: '/etc/kube/config', kubeContext: 'prod', namespace: 'agents', requestTimeoutSeconds: 300 });
  });

  it('accepts in_cluster auth with neither a path nor a context (blank counts as unset)', () => {
    expect(parseKubernetesConnection({ authMode: 'in_cluster', kubeconfigPath: '', kubeContext: '  ' }, E)).toMatchObject({
      authMode: 'in_cluster',
      kubeconfigPath: null,
      kubeContext: null,
    });
  });

  it.each<[KubernetesConnectionInput, string, string]>([
    [{ authMode: 'token' }, 'auth_mode', 'must be kubeconfig or in_cluster'],
    [{ kubeconfigPath: 'relative/config' }, 'kubeconfig_path', 'must be an absolute path for kubeconfig auth'],
    [{ authMode: 'in_cluster', kubeconfigPath: '/k' }, 'kubeconfig_path', 'must be empty for in-cluster auth'],
    [{ authMode: 'in_cluster', kubeContext: 'prod' }, 'kube_context', 'must be empty for in-cluster auth'],
    [{ namespace: 'Agents' }, 'namespace', 'must be a valid Kubernetes namespace'],
    [{ namespace: 'team.a' }, 'namespace', 'must be a valid Kubernetes namespace'],
    [{ namespace: 'a'.repeat(64) }, 'namespace', 'must be a valid Kubernetes namespace'],
    [{ namespace: '' }, 'namespace', 'must be a valid Kubernetes namespace'],
    [{ requestTimeoutSeconds: 0 }, 'request_timeout_seconds', 'must be between 1 and 300'],
    [{ requestTimeoutSeconds: 301 }, 'request_timeout_seconds', 'must be between 1 and 300'],
    [{ requestTimeoutSeconds: 2.5 }, 'request_timeout_seconds', 'must be an integer'],
  ])('rejects %j at %s', (input, key, detail) => {
    let caught: unknown;
    try {
      parseKubernetesConnection(input, E, '/etc/berth.yaml');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigFieldError);
    expect((caught as ConfigFieldError).path).toBe(`${E}.${key}`);
    expect((caught as ConfigFieldError).detail).toBe(detail);
    expect((caught as ConfigFieldError).file).toBe('/etc/berth.yaml');
  });
});
