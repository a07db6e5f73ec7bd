// The Kubernetes executor's failures around the workspace on the real test cluster, through the
// controller as its ServiceAccount: a Pod template that breaks a reserved rule never loads (the
// error names the field; nothing is created), a failing setup_script and an image without git fail
// `bootstrap` with the reason and the output. (rm of a session whose Pod was swapped for a foreign
// one is in executor-foreign.test.ts.)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findInstallRoot, loadConfig } from '../../src/config/index.js';
import { berthOnCluster, FAST_AGENT_ENV, imageTemplate, ROOT, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { launchFailing, sessionLeftovers, stageOf } from './support/failures.js';
import { createTestRepo, type TestRepo } from './support/git.js';

const env = clusterEnv();
const PVC = { mode: 'managed_pvc', size: '1Gi' };

let h: BerthOnCluster;
let repo: TestRepo;

beforeAll(async () => {
  repo = await createTestRepo('wsfail', { 'README.md': '# workspace failures\n' });
  h = await berthOnCluster({
    prefix: 'wsfail',
    profiles: {
      k8s: { pod_template: imageTemplate(env.agentImage), workspace: PVC },
      'setup-fails': {
        pod_template: imageTemplate(env.agentImage),
        workspace: PVC,
        setup_script: "echo 'installing dependencies'\necho 'npm ERR! could not resolve left-pad' >&2\nexit 7\n",
      },
      'no-git': { pod_template: imageTemplate(env.busyboxImage), workspace: PVC },
    },
  });
});

afterAll(async () => {
  await h?.close();
  await repo?.remove();
});

describe('kubernetes executor: a template that breaks a reserved rule', () => {
  const container = (extra: Record<string, unknown>) => ({ name: 'agent', image: env.agentImage, ...extra });
  const P = 'profiles.bad.kubernetes.pod_template';
  const cases: [string, Record<string, unknown>, string][] = [
    ['the main container command', { spec: { containers: [container({ command: ['sleep', 'infinity'] })] } }, `${P}.spec.containers[0].command`],
    ['a berth.dev/ label', { metadata: { labels: { 'berth.dev/x': 'y' } }, spec: { containers: [container({})] } }, `${P}.metadata.labels.berth.dev/x`],
    ['a BERTH_ env variable', { spec: { containers: [container({ env: [{ name: 'PLAIN', value: '1' }, { name: 'BERTH_X', value: '1' }] })] } }, `${P}.spec.containers[0].env[1].name`],
    ['a volume named berth-workspace', { spec: { containers: [container({})], volumes: [{ name: 'berth-workspace', emptyDir: {} }] } }, `${P}.spec.volumes[0].name`],
  ];

  it.each(cases)('%s: loading the config names the field, and nothing is created', async (_what, template, path) => {
    const file = join(h.dataDir, `bad-${path.replace(/[^a-z0-9]+/gi, '-')}.yaml`);
    writeFileSync(
      file,
      JSON.stringify({
        executors: { cluster: { type: 'kubernetes', kubeconfig_path: h.sa.kubeconfigPath, namespace: h.ns.name } },
        profiles: {
          good: { executor: 'cluster', kubernetes: { pod_template: imageTemplate(env.agentImage), workspace: PVC } },
          bad: { executor: 'cluster', kubernetes: { pod_template: JSON.stringify(template), workspace: PVC } },
        },
      }),
    );
    const load = () => loadConfig({ dataDir: h.dataDir, path: file, installRoot: findInstallRoot(join(ROOT, 'src', 'config')) });
    expect(load).toThrow(`${path}: is reserved for Berth`);
    expect(await h.leftovers(), 'no Berth-labelled object in the namespace').toEqual([]);
  });
});

describe.concurrent('kubernetes executor: bootstrap failures and a replaced Pod', () => {
  it('a failing setup_script fails bootstrap with PrepareFailed and the script\'s output', async () => {
    const v = await launchFailing(h.controller, { repository: { url: repo.url }, executor: 'setup-fails', agent: 'demo', prompt: 'never runs', env: FAST_AGENT_ENV });
    const stage = stageOf(v, 'bootstrap');
    expect(stage).toMatchObject({ status: 'failed', reason: 'PrepareFailed' });
    expect(stage.message, 'its exit status').toContain('exit status 7');
    expect(stage.message, 'its stdout').toContain('installing dependencies');
    expect(stage.message, 'its stderr').toContain('npm ERR! could not resolve left-pad');
    expect(v.error).toMatchObject({ stage: 'bootstrap' });
    expect(v.error?.message).toContain('npm ERR! could not resolve left-pad');
    expect(stageOf(v, 'pod_ready').status, 'the Pod itself was fine').toBe('succeeded');
    expect(await sessionLeftovers(h, v.id), 'the rollback deleted the Pod and the PVC').toEqual([]);
  });

  it('an image without git fails bootstrap saying git is not installed', async () => {
    const v = await launchFailing(h.controller, { repository: { url: repo.url }, executor: 'no-git', agent: 'demo', prompt: 'never runs', env: FAST_AGENT_ENV });
    const stage = stageOf(v, 'bootstrap');
    expect(stage).toMatchObject({ status: 'failed', reason: 'PrepareFailed' });
    expect(stage.message).toContain('git is not installed in the image');
    expect(v.error?.message).toContain('git is not installed in the image');
    expect(await sessionLeftovers(h, v.id)).toEqual([]);
  });
});
