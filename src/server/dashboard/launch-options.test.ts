import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../config/index.js';
import { launchOptionsOf } from './launch-options.js';

describe('launchOptionsOf', () => {
  it('offers the built-in agents and local executor with no config', () => {
    const config = resolveConfig({}, { source: null, installRoot: '/opt/berth' });
    expect(launchOptionsOf(config)).toEqual({
      agents: ['demo', 'demo-acp', 'claude', 'codex', 'gemini', 'opencode'],
      targets: [{ name: 'local', type: 'local', kind: 'executor', capabilities: { repositoryOptional: false, removes: "the session's workspace directory, with every uncommitted change in it" } }],
      defaults: { agent: 'demo', executor: 'local' },
    });
  });
});

describe('launchOptionsOf with Kubernetes', () => {
  it('lists profiles with their executor type and capabilities, and leaves out a Kubernetes executor that has no Pod template', () => {
    const raw = {
      defaults: { executor: 'k8s' },
      executors: { cluster: { type: 'kubernetes', namespace: 'agents' } },
      profiles: {
        k8s: { executor: 'cluster', kubernetes: { pod_template: 'spec:\n  containers:\n    - name: agent\n      image: registry.example/agent:1\n' } },
        big: { executor: 'local' },
      },
      agents: { claude: { command: ['claude'] } },
    };
    const options = launchOptionsOf(resolveConfig(raw, { source: '/etc/berth.yaml', installRoot: '/opt/berth' }));
    expect(options.targets).toEqual(
      expect.arrayContaining([
        { name: 'local', type: 'local', kind: 'executor', capabilities: { repositoryOptional: false, removes: "the session's workspace directory, with every uncommitted change in it" } },
        { name: 'k8s', type: 'kubernetes', kind: 'profile', capabilities: { repositoryOptional: true, removes: "the session's Pod and its PVC (the workspace volume, with every file in it)" } },
        { name: 'big', type: 'local', kind: 'profile', capabilities: { repositoryOptional: false, removes: "the session's workspace directory, with every uncommitted change in it" } },
      ]),
    );
    expect(options.targets.map((t) => t.name)).not.toContain('cluster');
    expect(options.agents).toEqual(expect.arrayContaining(['demo', 'claude']));
    expect(options.defaults.executor).toBe('k8s');
  });
});
