/**
 * The executor contract (test/contract/executor-contract.ts) run against the Kubernetes executor on
 * the real test cluster, as the executor's ServiceAccount in a restricted namespace: a managed-PVC
 * profile cloning from the cluster's git daemon, and one whose setup script fails. What it holds
 * for a session is every Pod and PVC carrying the session's label (so "nothing left" means no
 * labelled object at all); what it exposes is those objects and the namespace's Events.
 * @module
 */
import { profileSnapshot } from '../../src/controller/executor-factory.js';
import { executorContract, type HeldResource } from '../contract/executor-contract.js';
import { executorOnCluster, imageTemplate } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';

const env = clusterEnv();
const SESSION_LABEL = 'berth.dev/session-id';

executorContract('kubernetes', async () => {
  const workspace = { mode: 'managed_pvc', size: '1Gi' };
  const repo: TestRepo = await createTestRepo('contract', { 'README.md': '# contract\n', BERTH_MARKER: 'marker-k8s\n' });
  const h = await executorOnCluster({
    prefix: 'contract',
    profiles: {
      k8s: { pod_template: imageTemplate(env.agentImage), workspace },
      'k8s-badsetup': { pod_template: imageTemplate(env.agentImage), workspace, setup_script: 'echo "setup is failing" >&2; exit 7' },
    },
  });
  const bySession = (id: string) => ({ namespace: h.ns.name, labelSelector: `${SESSION_LABEL}=${id}` });
  return {
    executor: h.executor,
    reopen: () => h.reopen(),
    // src/controller/launch.ts records what the factory resolves for the launch's profile
    profile: profileSnapshot(h.config, 'k8s', h.deps),
    repository: { url: repo.url },
    marker: { file: 'BERTH_MARKER', text: 'marker-k8s\n' },
    // the git daemon answers, the repository does not exist: the clone in the Pod fails
    badRepository: { url: `${env.gitBase}/no-such-repo-${repo.name}.git` },
    failingSetupProfile: profileSnapshot(h.config, 'k8s-badsetup', h.deps),
    async held(id) {
      const held: HeldResource[] = [];
      for (const p of (await h.core.listNamespacedPod(bySession(id))).items) held.push({ what: `pod/${p.metadata?.name ?? '?'}`, recordedAs: p.metadata?.uid ?? '?' });
      for (const p of (await h.core.listNamespacedPersistentVolumeClaim(bySession(id))).items) held.push({ what: `pvc/${p.metadata?.name ?? '?'}`, recordedAs: p.metadata?.uid ?? '?' });
      return held;
    },
    async exposed(id) {
      const pods = await h.core.listNamespacedPod(bySession(id));
      const pvcs = await h.core.listNamespacedPersistentVolumeClaim(bySession(id));
      const events = await h.core.listNamespacedEvent({ namespace: h.ns.name });
      return JSON.stringify({ pods: pods.items, pvcs: pvcs.items, events: events.items });
    },
    async close() {
      // the whole namespace, not only the contract's sessions, holds no Berth-labelled object
      const left = await h.leftovers();
      await h.close();
      await repo.remove();
      if (left.length > 0) throw new Error(`kubernetes executor contract left ${left.join(', ')}`);
    },
  };
}, [
  { case: 'removeUnrecorded', reason: 'what a launch creates before its first record is found by its labels and swept (startSweeps)' },
  { case: 'readRecordedOutput', reason: 'the output is on the volume, read through agentctl: logs of a stopped session come from the copy the controller takes at stop' },
]);
