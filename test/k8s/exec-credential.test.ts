// A session launched through a kubeconfig whose user is an exec credential plugin (a tiny script
// printing an ExecCredential with the executor ServiceAccount's token), driven end to end as users
// drive it: the real `berth serve` and the built CLI. The plugin must have run (its log), the
// session must work (exec), and `berth launch` must print the template's security warning
// (automountServiceAccountToken: true — allowed under Pod Security `restricted`). `berth rm`
// leaves nothing behind.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ensureBuilt, runCli, startServeProcess, stopProcess } from '../integration/cli/helpers.js';
import { ensureArtifacts, imageTemplate } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { loadKubeConfig } from './support/kube.js';
import { createTestNamespace, type TestNamespace } from './support/namespace.js';
import { createExecutorServiceAccount, type ServiceAccountAccess } from './support/service-account.js';

const env = clusterEnv();
const WARNING = 'profiles.warned.kubernetes.pod_template.spec.automountServiceAccountToken: service account token automount is enabled';

describe('kubernetes executor through an exec credential plugin', () => {
  let ns: TestNamespace;
  let sa: ServiceAccountAccess;
  let repo: TestRepo;
  let dataDir: string;
  let serve: ChildProcess | undefined;
  let core: CoreV1Api;

  beforeAll(async () => {
    ensureBuilt();
    ensureArtifacts();
    const admin = loadKubeConfig(env.kubeconfig);
    core = admin.makeApiClient(CoreV1Api);
    ns = await createTestNamespace(admin, 'execcred', { podSecurity: 'restricted' });
    sa = await createExecutorServiceAccount(admin, ns.name);
    repo = await createTestRepo('execcred', { 'README.md': '# exec credential\n', BERTH_MARKER: 'through-the-plugin\n' });
    dataDir = mkdtempSync(join(tmpdir(), 'berth-execcred-'));
    const template = JSON.parse(imageTemplate(env.agentImage)) as { spec: Record<string, unknown> };
    template.spec.automountServiceAccountToken = true;
    writeFileSync(
      join(dataDir, 'berth.yaml'),
      stringify({
        executors: { cluster: { type: 'kubernetes', kubeconfig_path: sa.execKubeconfigPath, namespace: ns.name } },
        profiles: { warned: { executor: 'cluster', kubernetes: { pod_template: JSON.stringify(template), workspace: { mode: 'empty_dir' } } } },
      }),
    );
    serve = (await startServeProcess(dataDir)).child;
  });

  afterAll(async () => {
    await stopProcess(serve);
    await sa?.cleanup().catch(() => undefined);
    await ns?.cleanup();
    await repo?.remove();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('launches, works and is removed with credentials from the plugin; launch prints the security warning', async () => {
    // The kubeconfig holds no credential but the plugin: whatever serve did with the cluster so far
    // (the sweep of unrecorded objects at its start, this launch) got its token from the plugin.
    const launch = await runCli(['launch', '--repo', repo.url, '--executor', 'warned', '--agent', 'demo', '--env', 'BERTH_DEMO_STEP_MS=0'], { dataDir });
    expect(launch.code, launch.stdout + launch.stderr).toBe(0);
    const id = /Session (\S+) is ready/.exec(launch.stdout)?.[1] ?? '';
    expect(id, launch.stdout).not.toBe('');
    expect(launch.stdout).toContain(`\n  ! SecurityWarning: 1 security warning about the Pod template (allowed, not changed; berth doctor lists them): ${WARNING}\n`);
    for (const stage of ['storage', 'pod_ready', 'bootstrap', 'agentctl_connect', 'agent_start']) expect(launch.stdout).toMatch(new RegExp(`✓ ${stage}\\s+\\d`));
    expect(readFileSync(sa.execPluginLog, 'utf8'), 'client-node ran the exec plugin for the credentials').toMatch(/^run$/m);

    const marker = await runCli(['exec', id, '--', 'cat', 'BERTH_MARKER'], { dataDir });
    expect(marker.code, marker.stderr).toBe(0);
    expect(marker.stdout).toBe('through-the-plugin\n');

    const rm = await runCli(['rm', id], { dataDir });
    expect(rm.code, rm.stdout + rm.stderr).toBe(0);
    const left = await core.listNamespacedPod({ namespace: ns.name, labelSelector: 'app.kubernetes.io/managed-by=berth' });
    expect(left.items.map((p) => p.metadata?.name), 'rm leaves no Pod behind').toEqual([]);
  });
});
