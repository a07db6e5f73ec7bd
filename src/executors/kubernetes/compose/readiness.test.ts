import type { V1ContainerStatus, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { assessPod, assessPvc } from './readiness.js';

const SCHEDULED = { type: 'PodScheduled', status: 'True' };
function pod(status: V1PodStatus, extra: Partial<V1Pod> = {}): V1Pod {
  return { metadata: { name: 'p' }, spec: { containers: [{ name: 'agent' }], nodeName: status.conditions ? 'node-1' : undefined }, status, ...extra };
}
function main(state: V1ContainerStatus['state'], more: Partial<V1ContainerStatus> = {}): V1ContainerStatus {
  return { name: 'agent', image: 'x', imageID: '', ready: false, restartCount: 0, state, ...more };
}

describe('assessPod', () => {
  it.each<[string, V1Pod, { kind: string; phase: string; reason: string; message?: string }]>([
    [
      'an unschedulable Pod (with the scheduler message)',
      pod({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/1 nodes are available: 1 Insufficient memory.' }] }),
      { kind: 'waiting', phase: 'scheduling', reason: 'Unschedulable', message: 'pod scheduling failed: Unschedulable: 0/1 nodes are available: 1 Insufficient memory.' },
    ],
    ['a Pod not yet seen by the scheduler', { metadata: {}, spec: { containers: [] }, status: { phase: 'Pending' } }, { kind: 'waiting', phase: 'scheduling', reason: 'Pending' }],
    [
      'a scheduled Pod without container statuses',
      pod({ phase: 'Pending', conditions: [SCHEDULED] }),
      { kind: 'waiting', phase: 'pulling', reason: 'ContainerCreating' },
    ],
    [
      'a container being created',
      pod({ phase: 'Pending', conditions: [SCHEDULED], containerStatuses: [main({ waiting: { reason: 'ContainerCreating' } })] }),
      { kind: 'waiting', phase: 'pulling', reason: 'ContainerCreating' },
    ],
    [
      'init containers running',
      pod({
        phase: 'Pending',
        conditions: [SCHEDULED],
        initContainerStatuses: [{ name: 'init', image: 'x', imageID: 'sha', ready: false, restartCount: 0, state: { running: {} } }],
        containerStatuses: [main({ waiting: { reason: 'PodInitializing' } })],
      }),
      { kind: 'waiting', phase: 'starting', reason: 'PodInitializing', message: 'init container init is running' },
    ],
    [
      'a restarting main container',
      pod({ phase: 'Running', conditions: [SCHEDULED], containerStatuses: [main({ waiting: { reason: 'CrashLoopBackOff' } }, { imageID: 'sha', restartCount: 2, lastState: { terminated: { exitCode: 1, reason: 'Error' } } })] }),
      { kind: 'waiting', phase: 'starting', reason: 'CrashLoopBackOff', message: 'main container restarted 2 times (last exit code 1 (Error))' },
    ],
    [
      'a main container whose prepare.sh failed',
      pod({
        phase: 'Running',
        conditions: [SCHEDULED],
        containerStatuses: [
          main(
            { waiting: { reason: 'CrashLoopBackOff' } },
            { imageID: 'sha', restartCount: 1, lastState: { terminated: { exitCode: 65, reason: 'Error', message: 'berth: prepare.sh failed with exit status 1:\nberth prepare: git is not installed in the image\n' } } },
          ),
        ],
      }),
      { kind: 'terminal', phase: 'running', reason: 'PrepareFailed', message: 'prepare.sh failed: berth: prepare.sh failed with exit status 1: | berth prepare: git is not installed in the image' },
    ],
    ['a running main container', pod({ phase: 'Running', conditions: [SCHEDULED], containerStatuses: [main({ running: {} }, { imageID: 'sha' })] }), { kind: 'ready', phase: 'running', reason: 'Running' }],
    ['a failed Pod', pod({ phase: 'Failed', reason: 'Evicted', message: 'low on ephemeral-storage' }), { kind: 'terminal', phase: 'running', reason: 'Evicted', message: 'pod failed: Evicted: low on ephemeral-storage' }],
    ['a completed Pod', pod({ phase: 'Succeeded' }), { kind: 'terminal', phase: 'running', reason: 'PodCompleted' }],
    ['a Pod being deleted', pod({ phase: 'Running' }, { metadata: { deletionTimestamp: new Date() } }), { kind: 'terminal', phase: 'scheduling', reason: 'PodDeleted' }],
    ...(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName'] as const).map(
      (reason) =>
        [
          `main ${reason}`,
          pod({ phase: 'Pending', conditions: [SCHEDULED], containerStatuses: [main({ waiting: { reason, message: 'pull https://registry.example/v2/agent/manifests/1.2?token=abc failed' } })] }),
          { kind: 'terminal', phase: 'pulling', reason, message: `main container: ${reason}: pull https://registry.example failed` },
        ] as [string, V1Pod, { kind: string; phase: string; reason: string; message: string }],
    ),
    ...(['CreateContainerConfigError', 'CreateContainerError'] as const).map(
      (reason) =>
        [`main ${reason}`, pod({ phase: 'Pending', conditions: [SCHEDULED], containerStatuses: [main({ waiting: { reason, message: 'secret "x" not found' } })] }), { kind: 'terminal', phase: 'starting', reason }] as [
          string,
          V1Pod,
          { kind: string; phase: string; reason: string },
        ],
    ),
    [
      'a terminated main container',
      pod({ phase: 'Running', conditions: [SCHEDULED], containerStatuses: [main({ terminated: { exitCode: 127, reason: 'StartError', message: 'exec: "sh": executable file not found' } })] }),
      { kind: 'terminal', phase: 'running', reason: 'ContainerTerminated', message: 'main container terminated with code 127: StartError: exec: "sh": executable file not found' },
    ],
    [
      'an init container that failed',
      pod({ phase: 'Pending', conditions: [SCHEDULED], initContainerStatuses: [{ name: 'init', image: 'x', imageID: 'sha', ready: false, restartCount: 0, state: { terminated: { exitCode: 2 } } }] }),
      { kind: 'terminal', phase: 'starting', reason: 'InitContainerFailed', message: 'init container init exited with code 2' },
    ],
    [
      'an init container in CrashLoopBackOff',
      pod({
        phase: 'Pending',
        conditions: [SCHEDULED],
        initContainerStatuses: [{ name: 'init', image: 'x', imageID: 'sha', ready: false, restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1 } } }],
      }),
      { kind: 'terminal', phase: 'starting', reason: 'InitContainerCrashLoop', message: 'init container init keeps failing (last exit code 1)' },
    ],
    [
      'an init container image pull error',
      pod({ phase: 'Pending', conditions: [SCHEDULED], initContainerStatuses: [{ name: 'init', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull' } } }] }),
      { kind: 'terminal', phase: 'pulling', reason: 'ErrImagePull' },
    ],
  ])('reports %s', (_name, p, expected) => {
    expect(assessPod(p, 'agent')).toMatchObject(expected);
  });
});

describe('assessPvc', () => {
  it.each([
    [{ status: { phase: 'Pending' } }, 'waiting', 'Pending'],
    [{ spec: { volumeName: 'pv-1' }, status: { phase: 'Bound' } }, 'ready', 'Bound'],
    [{ status: { phase: 'Lost' } }, 'terminal', 'ClaimLost'],
    [{ metadata: { deletionTimestamp: new Date() }, status: { phase: 'Bound' } }, 'terminal', 'ClaimDeleting'],
  ])('reports %j as %s', (pvc, kind, reason) => {
    expect(assessPvc(pvc)).toMatchObject({ kind, reason });
  });
});
