// A controller restarted with a rotated kubeconfig (issue 9; spec §7 and the §2.1 trust rule): a
// ready session is reached with the *current* config's file, credentials and context — the file it
// launched with is deleted — and in the namespace the session recorded, though the config now names
// another one for new sessions. Nothing is re-run; stop, resume and rm work through the new config.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRepo, type TestRepo } from './support/git.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, waitForOutput, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';

const env = clusterEnv();

interface Kubeconfig {
  clusters: { name: string; cluster: Record<string, unknown> }[];
  contexts: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
  users: { name: string; user: Record<string, unknown> }[];
  'current-context': string;
}

/**
 * The exec-plugin kubeconfig of the same ServiceAccount, renamed throughout and with a second,
 * current context that points nowhere: only `kube_context: rotated` reaches the cluster.
 */
function rotatedKubeconfig(execKubeconfigPath: string, out: string): void {
  const doc = parse(readFileSync(execKubeconfigPath, 'utf8')) as Kubeconfig;
  const [cluster] = doc.clusters;
  const [user] = doc.users;
  const rotated: Kubeconfig = {
    clusters: [
      { name: 'rotated-cluster', cluster: cluster!.cluster },
      { name: 'nowhere', cluster: { server: 'https://127.0.0.1:9', 'insecure-skip-tls-verify': true } },
    ],
    users: [{ name: 'rotated-user', user: user!.user }],
    contexts: [
      { name: 'stale', context: { cluster: 'nowhere', user: 'rotated-user' } },
      { name: 'rotated', context: { cluster: 'rotated-cluster', user: 'rotated-user' } },
    ],
    'current-context': 'stale',
  };
  writeFileSync(out, stringify({ apiVersion: 'v1', kind: 'Config', ...rotated }), { mode: 0o600 });
}

describe('kubernetes executor: a controller restarted with a rotated kubeconfig', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    repo = await createTestRepo('rotate', { 'README.md': '# rotate\n', BERTH_MARKER: 'marker-rotate\n' });
    h = await berthOnCluster({ prefix: 'rotate', profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } } });
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
  });

  it('reconnects through the new file, credentials and context, in the namespace the session recorded', async () => {
    const v = await launchReady(h.controller, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    await waitForOutput(h.controller, v.id, /ready for instructions/);
    expect((await execText(h.controller, v.id, ['sh', '-c', 'echo kept > rotate.txt'])).exitCode).toBe(0);
    await h.controller.close();

    // Rotate while the controller is down: the token kubeconfig it launched with is deleted, the
    // config names a new file (exec credential plugin, other names, `kube_context`) and, for new
    // sessions, a namespace this session is not in.
    rmSync(h.sa.kubeconfigPath);
    const rotatedPath = join(h.dataDir, 'kubeconfig-rotated');
    rotatedKubeconfig(h.sa.execKubeconfigPath, rotatedPath);
    const config = JSON.parse(readFileSync(h.configFile, 'utf8')) as { executors: { cluster: Record<string, unknown> } };
    config.executors.cluster = { ...config.executors.cluster, kubeconfig_path: rotatedPath, kube_context: 'rotated', namespace: `${h.ns.name}-elsewhere` };
    writeFileSync(h.configFile, JSON.stringify(config));
    writeFileSync(h.sa.execPluginLog, '');

    const c = await h.restart();
    const back = await c.get(v.id);
    expect(back.state, back.error?.message).toBe('ready');
    expect(back.agentProcess, 'the agent is not re-run').toMatchObject({ id: 'agent-1', status: 'running' });
    expect((await execText(c, v.id, ['cat', 'rotate.txt', 'BERTH_MARKER'])).stdout).toBe('kept\nmarker-rotate\n');
    expect(readFileSync(h.sa.execPluginLog, 'utf8'), 'the credential plugin of the new kubeconfig was used').toContain('run');

    // The session's own lifecycle works through the new config, in its recorded namespace.
    expect((await c.stop(v.id)).state).toBe('stopped');
    const resumed = await c.resume(v.id);
    expect((await c.waitUntilSettled(resumed.id)).state).toBe('ready');
    expect((await execText(c, v.id, ['cat', 'rotate.txt'])).stdout).toBe('kept\n');
    await c.remove(v.id);
    expect(await h.leftovers()).toEqual([]);
  });
});
