import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubernetesConnection } from '../types.js';
import { createKubeClient } from './client.js';
import { KubeConfigError } from './errors.js';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: { server: https://a.example:6443, insecure-skip-tls-verify: true }
- name: b
  cluster: { server: https://b.example:6443, insecure-skip-tls-verify: true }
users:
- name: u
  user: { token: not-a-real-token }
contexts:
- name: first
  context: { cluster: a, user: u, namespace: ns1 }
- name: second
  context: { cluster: b, user: u }
current-context: first
`;

function connection(overrides: Partial<KubernetesConnection>): KubernetesConnection {
  return { authMode: 'kubeconfig', kubeconfigPath: null, kubeContext: null, namespace: 'default', requestTimeoutSeconds: 30, ...overrides };
}

function loadError(fn: () => unknown): KubeConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof KubeConfigError) return err;
    throw err;
  }
  throw new Error('expected a KubeConfigError');
}

describe('createKubeClient (loading only; nothing is sent)', () => {
  let dir: string;
  let path: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berth-kube-client-'));
    path = join(dir, 'config');
    await writeFile(path, KUBECONFIG);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('uses the explicit path and its current context, with the request timeout in ms', () => {
    const client = createKubeClient(connection({ kubeconfigPath: path, requestTimeoutSeconds: 45 }));
    expect(client).toMatchObject({ contextName: 'first', server: 'https://a.example:6443', requestTimeoutMs: 45_000 });
  });

  it('switches to kube_context', () => {
    expect(createKubeClient(connection({ kubeconfigPath: path, kubeContext: 'second' })).server).toBe('https://b.example:6443');
  });

  it('reads $KUBECONFIG from the given environment, then ~/.kube/config under $HOME', () => {
    expect(createKubeClient(connection({}), { env: { KUBECONFIG: path } }).contextName).toBe('first');
    const err = loadError(() => createKubeClient(connection({}), { env: { HOME: dir } }));
    expect(err.message).toBe(
      `kubernetes: load client configuration failed: kubeconfig ${join(dir, '.kube', 'config')} does not exist (the default; set kubeconfig_path of the executor or $KUBECONFIG)`,
    );
  });

  it('names an unknown context and lists the known ones', () => {
    const err = loadError(() => createKubeClient(connection({ kubeconfigPath: path, kubeContext: 'third' })));
    expect(err.message).toBe(
      `kubernetes: load client configuration failed: kubeconfig ${path} has no context "third" (contexts: first, second; fix kube_context)`,
    );
  });

  it('wraps a parse error, naming the file, without leaking what the file holds', async () => {
    const broken = join(dir, 'broken');
    await writeFile(broken, 'users: [ { token: 0123456789abcdef0123456789abcdef0123 \n');
    const err = loadError(() => createKubeClient(connection({ kubeconfigPath: broken })));
    expect(err.message).toMatch(new RegExp(`^kubernetes: load client configuration failed: kubeconfig ${broken}: `));
    expect(err.message).not.toContain('0123456789abcdef0123456789abcdef0123');
    expect(err.cause).toBeInstanceOf(Error);
  });

  it('explains in_cluster auth outside a Pod', () => {
    const err = loadError(() => createKubeClient(connection({ authMode: 'in_cluster' }), { env: {} }));
    expect(err.message).toMatch(/in_cluster auth needs KUBERNETES_SERVICE_HOST\/PORT/);
  });
});
