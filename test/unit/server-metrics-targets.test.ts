import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/index.js';
import { INIT_STAGE, REPLACEMENT_STAGE } from '../../src/executors/launch-kit/index.js';
import { STAGE as KUBE_STAGE } from '../../src/executors/kubernetes/constants.js';
import { STAGE as LOCAL_STAGE } from '../../src/executors/local/constants.js';
import { AGENT_START_STAGE } from '../../src/controller/agent.js';
import { metricTargetsFromLaunchOptions, metricTargetsOf } from '../../src/server/metric-targets.js';
import { KNOWN_STAGES } from '../../src/server/metrics.js';

describe('the metrics’ known stages', () => {
  it('are the stages each executor type and the controller report', () => {
    expect([...KNOWN_STAGES.local].sort()).toEqual([INIT_STAGE, ...Object.values(LOCAL_STAGE), AGENT_START_STAGE].sort());
    expect([...KNOWN_STAGES.kubernetes].sort()).toEqual([INIT_STAGE, ...Object.values(KUBE_STAGE), AGENT_START_STAGE, REPLACEMENT_STAGE].sort());
  });
});

describe('metric targets', () => {
  const config = resolveConfig(
    {
      executors: { local: { type: 'local' }, cluster: { type: 'kubernetes', namespace: 'agents' } },
      profiles: { big: { executor: 'local', env: { X: '1' } }, gpu: { executor: 'cluster', kubernetes: { pod_template: 'spec:\n  containers:\n    - name: agent\n      image: busybox\n' } } },
    },
    { source: null, installRoot: '/opt/berth', homeDir: '/home/x' },
  );

  it('label an executor entry as itself and a profile with its executor entry', () => {
    expect(metricTargetsOf(config)).toEqual(
      expect.arrayContaining([
        { name: 'local', executor: 'local', profile: '', type: 'local' },
        { name: 'cluster', executor: 'cluster', profile: '', type: 'kubernetes' },
        { name: 'big', executor: 'local', profile: 'big', type: 'local' },
        { name: 'gpu', executor: 'cluster', profile: 'gpu', type: 'kubernetes' },
      ]),
    );
  });

  it('fall back to the launch options, each target labelled as itself', () => {
    const capabilities = { repositoryOptional: false, removes: 'x' };
    expect(
      metricTargetsFromLaunchOptions({ agents: ['demo'], targets: [{ name: 'big', type: 'local', kind: 'profile', capabilities }], defaults: { agent: 'demo', executor: 'local' } }),
    ).toEqual([{ name: 'big', executor: 'big', profile: '', type: 'local' }]);
    expect(metricTargetsFromLaunchOptions(undefined)).toEqual([]);
  });
});
