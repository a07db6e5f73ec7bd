// The Kubernetes executor's ordinary pod_ready failures on the real test cluster, driven through the
// controller as its ServiceAccount: a missing image, an unschedulable Pod (reported while waiting,
// then its own budget), a crashing init container and a Pod deleted while waiting each fail the
// launch fast with their reason — never a budget timeout in disguise — and the rollback leaves no
// Pod or PVC behind. Each case has its own session; they share one namespace and run concurrently.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berthOnCluster, FAST_AGENT_ENV, imageTemplate, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { launchFailing, recordEvents, sessionLeftovers, stageOf, type EventRecorder } from './support/failures.js';
import { createTestRepo, type TestRepo } from './support/git.js';

const env = clusterEnv();
const PVC = { mode: 'managed_pvc', size: '1Gi' };
const HUGE = { resources: { requests: { memory: '1000Gi' } } };

describe.concurrent('kubernetes executor: pod_ready failures', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;
  let events: EventRecorder;

  beforeAll(async () => {
    repo = await createTestRepo('failures', { 'README.md': '# failures\n' });
    h = await berthOnCluster({
      prefix: 'failures',
      profiles: {
        'never-pull': { pod_template: imageTemplate(`${env.agentImage.replace(/:[^:/]+$/, '')}:no-such-tag`), workspace: PVC },
        'no-registry': {
          pod_template: JSON.stringify({ spec: { containers: [{ name: 'agent', image: 'registry.berth-test.invalid/agent:1', imagePullPolicy: 'IfNotPresent' }] } }),
          workspace: PVC,
        },
        unschedulable: { pod_template: imageTemplate(env.agentImage, HUGE), workspace: PVC, timeouts: { scheduling_seconds: 3 } },
        'unschedulable-long': { pod_template: imageTemplate(env.agentImage, HUGE), workspace: PVC, timeouts: { scheduling_seconds: 600 } },
        'init-crash': {
          pod_template: JSON.stringify({
            spec: {
              initContainers: [{ name: 'boom', image: env.busyboxImage, imagePullPolicy: 'Never', command: ['sh', '-c', 'echo going down >&2; exit 1'] }],
              containers: [{ name: 'agent', image: env.agentImage, imagePullPolicy: 'Never' }],
            },
          }),
          workspace: PVC,
        },
      },
    });
    events = recordEvents(h.controller);
  });

  afterAll(async () => {
    events?.stop();
    try {
      if (h) expect(await h.leftovers(), 'nothing Berth-labelled is left in the namespace').toEqual([]);
    } finally {
      await h?.close();
      await repo?.remove();
    }
  });

  const launch = (executor: string) => launchFailing(h.controller, { repository: { url: repo.url }, executor, agent: 'demo', prompt: 'never runs', env: FAST_AGENT_ENV });

  it('an image that may not be pulled and is not there fails pod_ready with ErrImageNeverPull', async () => {
    const v = await launch('never-pull');
    const stage = stageOf(v, 'pod_ready');
    expect(stage).toMatchObject({ status: 'failed', reason: 'ErrImageNeverPull' });
    expect(stage.message).toContain('no-such-tag');
    expect(v.error).toMatchObject({ stage: 'pod_ready' });
    expect(v.error?.message).toContain('ErrImageNeverPull');
    expect(v.stages.map((s) => s.name), 'the launch stopped at pod_ready').toEqual(['storage', 'pod_ready']);
    expect(await sessionLeftovers(h, v.id), 'the rollback deleted the Pod and the PVC').toEqual([]);
  });

  it('an image from a registry that does not resolve fails pod_ready with the pull error, not a timeout', async () => {
    const v = await launch('no-registry');
    const stage = stageOf(v, 'pod_ready');
    expect(stage.status).toBe('failed');
    expect(['ErrImagePull', 'ImagePullBackOff']).toContain(stage.reason);
    expect(stage.message).toContain('registry.berth-test.invalid');
    expect(v.error?.message).toMatch(/ErrImagePull|ImagePullBackOff/);
    expect(await sessionLeftovers(h, v.id)).toEqual([]);
  });

  it('an unschedulable Pod shows the scheduler\'s reason while waiting, then fails on its scheduling budget', async () => {
    const v = await launch('unschedulable');
    const waiting = events.stages(v.id).filter((s) => s.name === 'pod_ready' && s.status === 'waiting');
    const why = waiting.find((s) => (s.reason === 'Unschedulable' || s.reason === 'FailedScheduling') && /Insufficient memory/.test(s.message ?? ''));
    expect(why, `a waiting event gives the scheduler's reason; seen: ${JSON.stringify(waiting)}`).toBeDefined();
    const stage = stageOf(v, 'pod_ready');
    expect(stage).toMatchObject({ status: 'failed', reason: 'TimedOut' });
    expect(stage.message, 'the timeout names the budget setting').toContain('profiles.unschedulable.kubernetes.timeouts.scheduling_seconds');
    expect(stage.message, 'and the latest reason').toMatch(/latest: Unschedulable: .*Insufficient memory/);
    expect(v.error?.message).toContain('scheduling_seconds');
    expect(await sessionLeftovers(h, v.id)).toEqual([]);
  });

  it('a crashing init container fails pod_ready with the init container\'s reason', async () => {
    const v = await launch('init-crash');
    const stage = stageOf(v, 'pod_ready');
    expect(stage.status).toBe('failed');
    expect(['InitContainerFailed', 'InitContainerCrashLoop']).toContain(stage.reason);
    expect(stage.message).toMatch(/init container boom .*(exited with code 1|keeps failing \(last exit code 1)/);
    expect(v.error?.message).toContain('init container boom');
    expect(await sessionLeftovers(h, v.id)).toEqual([]);
  });

  it('a Pod deleted while the launch waits fails it with PodDeleted, not a timeout', async () => {
    const c = h.controller;
    const s = await c.launch({ repository: { url: repo.url }, executor: 'unschedulable-long', agent: 'demo', prompt: 'never runs', env: FAST_AGENT_ENV });
    await events.waitForStage(s.id, (st) => st.name === 'pod_ready' && st.status === 'waiting' && /Unschedulable|FailedScheduling/.test(st.reason ?? ''));
    const pods = await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${s.id}` });
    expect(pods.items).toHaveLength(1);
    await h.core.deleteNamespacedPod({ namespace: h.ns.name, name: pods.items[0]!.metadata!.name! });
    const v = await c.waitUntilSettled(s.id);
    expect(v.state).toBe('failed');
    expect(stageOf(v, 'pod_ready')).toMatchObject({ status: 'failed', reason: 'PodDeleted' });
    expect(v.error?.message, 'with what it was waiting for').toMatch(/the Pod was deleted before agentctl started \(latest: (Unschedulable|Pending): /);
    expect(await sessionLeftovers(h, v.id), 'the PVC was rolled back too').toEqual([]);
  });
});
