// The Kubernetes executor end to end on the real test cluster, driven through the controller as
// `berth` drives it, as the executor's ServiceAccount: launch with the demo agent cloning from the
// cluster's git daemon, logs, exec, files, git, stop (Pod gone, PVC kept), resume (new Pod, same
// PVC, the agent's work still there), rm (everything gone).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRepo, type TestRepo } from './support/git.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, waitForOutput, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';

const env = clusterEnv();

describe('kubernetes executor: managed PVC lifecycle', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    repo = await createTestRepo('lifecycle', { 'README.md': '# lifecycle\n\nA test repository.\n', BERTH_MARKER: 'marker-k8s\n' });
    h = await berthOnCluster({
      prefix: 'lifecycle',
      profiles: {
        k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } },
        // a cleanup script that saves the work before a destroy: it pushes to the cluster's git server
        saving: {
          pod_template: imageTemplate(env.agentImage),
          workspace: { mode: 'managed_pvc', size: '1Gi' },
          setup_script: 'echo setup-ran > .setup-marker',
          // (each step announced on stderr: a failure's message then shows how far the script got)
          cleanup_script: [
            'echo "cleanup: add" >&2',
            'git add -A',
            'echo "cleanup: commit" >&2',
            'git -c user.name=b -c user.email=b@example.com commit -qm "saved by cleanup"',
            'echo "cleanup: push" >&2',
            'git push -q origin HEAD:refs/heads/saved',
          ].join(' && '),
        },
      },
    });
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
  });

  it('launches, serves logs/exec/files/git, stops, resumes onto the same PVC and removes everything', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', agent: 'demo', prompt: 'take notes', env: FAST_AGENT_ENV });
    expect(v.stages.map((s) => s.name)).toEqual(['storage', 'pod_ready', 'bootstrap', 'agentctl_connect', 'agent_start']);
    expect(v.workspacePath).toBe('/workspace');
    const out = await waitForOutput(c, v.id, /ready for instructions/);
    expect(out).toContain('agent> marker: marker-k8s');
    expect(out).toContain('agent> created NOTES.md');

    expect(await execText(c, v.id, ['sh', '-c', 'echo hi; exit 3'])).toMatchObject({ exitCode: 3, stdout: 'hi\n' });
    expect((await execText(c, v.id, ['cat', 'BERTH_MARKER'])).stdout).toBe('marker-k8s\n');
    const ws = await c.workspace(v.id);
    expect(await ws.files.readTextFile('NOTES.md')).toContain('Task: take notes');
    const status = await ws.git.status();
    expect(JSON.stringify(status)).toContain('NOTES.md');
    // an edit to a tracked file shows in the diff, against the index and against the branch
    expect((await execText(c, v.id, ['sh', '-c', 'echo "edited in the Pod" >> README.md'])).exitCode).toBe(0);
    expect((await ws.git.diff()).diff).toContain('+edited in the Pod');
    expect((await ws.git.diff({ base: 'origin/main' })).diff).toContain('+edited in the Pod');

    const pods1 = await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` });
    expect(pods1.items).toHaveLength(1);
    const pod1 = pods1.items[0]!;
    const pvcs = await h.core.listNamespacedPersistentVolumeClaim({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` });
    expect(pvcs.items).toHaveLength(1);
    const pvcUid = pvcs.items[0]!.metadata!.uid;

    const stopped = await c.stop(v.id);
    expect(stopped.state).toBe('stopped');
    expect((await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items, 'stop deletes the Pod').toHaveLength(0);
    const kept = await h.core.listNamespacedPersistentVolumeClaim({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` });
    expect(kept.items.map((p) => p.metadata?.uid), 'stop keeps the PVC').toEqual([pvcUid]);

    const resumed = await c.resume(v.id);
    expect(resumed.state).toBe('ready');
    const pods2 = await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` });
    expect(pods2.items).toHaveLength(1);
    expect(pods2.items[0]!.metadata!.uid, 'a new Pod').not.toBe(pod1.metadata!.uid);
    expect(pods2.items[0]!.metadata!.name, 'under the same name').toBe(pod1.metadata!.name);
    expect((await execText(c, v.id, ['sh', '-c', 'grep -c "Task: take notes" NOTES.md'])).stdout.trim(), 'the agent\'s work survived (no re-clone)').not.toBe('0');
    expect(resumed.agentProcess).toMatchObject({ id: 'agent-2', status: 'running' });

    await c.remove(v.id);
    expect(await h.leftovers(), 'rm deletes the Pod and the managed PVC').toEqual([]);
  });

  it('keeps the Pod running across a controller restart and reconnects to the same agent (not re-run)', async () => {
    const v = await launchReady(h.controller, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    await waitForOutput(h.controller, v.id, /ready for instructions/);
    const before = await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` });
    const c = await h.restart();
    const after = await c.get(v.id);
    expect(after.state).toBe('ready');
    expect(after.agentProcess).toMatchObject({ id: 'agent-1', status: 'running' });
    const pods = await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` });
    expect(pods.items.map((p) => p.metadata?.uid), 'the same Pod').toEqual(before.items.map((p) => p.metadata?.uid));
    const out = await waitForOutput(c, v.id, /ready for instructions/);
    expect(out.match(/agent> starting/g), 'the output is replayed once; the agent was not started again').toHaveLength(1);
    await c.sendInput(v.id, 'after restart\n');
    await waitForOutput(c, v.id, /you said: after restart/);
    await c.remove(v.id);
    expect(await h.leftovers()).toEqual([]);
  });

  it('runs setup_script once after the clone and cleanup_script before rm deletes the Pod', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'saving', env: FAST_AGENT_ENV });
    expect((await execText(c, v.id, ['cat', '.setup-marker'])).stdout).toBe('setup-ran\n');
    await waitForOutput(c, v.id, /created NOTES.md/);
    await c.remove(v.id);
    const { spawnSync } = await import('node:child_process');
    const log = spawnSync('git', ['--git-dir', repo.path, 'log', '-1', '--format=%s', 'refs/heads/saved'], { encoding: 'utf8' });
    expect(log.stdout.trim(), `the cleanup script pushed the agent's work before the Pod went; the controller said:\n${h.warnings().join('\n')}`).toBe('saved by cleanup');
    expect(await h.leftovers()).toEqual([]);
  });
});
