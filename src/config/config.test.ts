import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { directLaunchProblem, loadConfig, renderAgentCommand, resolveConfig } from './config.js';
import { decodeProfileSnapshot, encodeProfileSnapshot } from '../executors/kubernetes/config/index.js';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { ConfigFileError } from './errors.js';

const installRoot = '/opt/berth';
const resolveRaw = (raw: unknown) => resolveConfig(raw, { source: '/etc/berth.yaml', installRoot });

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'berth-config-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('resolveConfig', () => {
  it('provides the demo agent and the local executor with no config at all', () => {
    const cfg = resolveRaw({});
    expect(cfg.defaults).toEqual({ executor: 'local', agent: 'demo' });
    expect(cfg.agents.demo?.command).toEqual(['{{agentctl}}', 'demo-agent']);
    expect(cfg.executors.local).toMatchObject({ type: 'local', agentctlPath: '/opt/berth/dist/agentctl.cjs' });
  });

  it('merges user entries over the built-ins and resolves relative paths against the config file', () => {
    const cfg = resolveRaw({
      executors: { local: { type: 'local', agentctl_path: 'bin/agentctl.cjs' }, k8s: { type: 'kubernetes', namespace: 'agents' } },
      profiles: { big: { executor: 'local', env: { X: '1' } } },
      agents: { claude: { command: ['claude', '-p', '{{prompt}}'], protocol: 'raw', env: { A: 'b' }, description: 'Claude Code' } },
      defaults: { agent: 'claude', executor: 'big' },
    });
    expect(cfg.executors.local).toMatchObject({ agentctlPath: '/etc/bin/agentctl.cjs' });
    expect(cfg.executors.k8s).toMatchObject({ type: 'kubernetes', namespace: 'agents', authMode: 'kubeconfig', requestTimeoutSeconds: 30 });
    expect(cfg.profiles.big).toEqual({ name: 'big', executor: 'local', env: { X: '1' }, secretEnv: [], description: '', kubernetes: null });
    expect(cfg.agents.demo, 'built-ins stay available').toBeDefined();
    expect(renderAgentCommand(cfg.agents.claude!, 'fix it')).toEqual(['claude', '-p', 'fix it']);
  });

  it.each([
    [{ agents: { claude: { command: [] } } }, 'agents.claude.command', 'must be a non-empty array of strings'],
    [{ agents: { claude: { command: 'claude' } } }, 'agents.claude.command', 'must be a non-empty array of strings'],
    [{ agents: { claude: { command: ['claude', ''] } } }, 'agents.claude.command[1]', 'must be a non-empty array of strings'],
    [{ agents: { claude: { command: ['x'], args: [] } } }, 'agents.claude.args', 'is not a known setting'],
    [{ agents: { claude: { command: ['x'], env: { 'BAD-NAME': 'v' } } } }, 'agents.claude.env.BAD-NAME', 'must be a valid environment variable name'],
    [{ agents: { claude: { command: ['x'], env: { PORT: 80 } } } }, 'agents.claude.env.PORT', 'must be a string (quote numbers and booleans)'],
    [{ agents: { Bad_Name: { command: ['x'] } } }, 'agents.Bad_Name', 'must be a name of lowercase letters, digits, "-" or "_"'],
    [{ executors: { x: { type: 'docker' } } }, 'executors.x.type', 'must have type "local" or "kubernetes"'],
    [{ executors: { x: { type: 'kubernetes', request_timeout_seconds: 900 } } }, 'executors.x.request_timeout_seconds', 'must be between 1 and 300'],
    [{ profiles: { p: { executor: 'nope' } } }, 'profiles.p.executor', 'must name an entry of executors (local)'],
    [{ defaults: { agent: 'ghost' } }, 'defaults.agent', 'must name an entry of agents'],
    [{ defaults: { executor: 'ghost' } }, 'defaults.executor', 'must name an entry of executors or profiles'],
    [{ extra: 1 }, 'extra', 'is not a known setting'],
    [{ agents: { claude: { comand: ['claude'] } } }, 'agents.claude.comand', "is not a known setting (did you mean 'command'?)"],
    [{ agents: { claude: { program: ['claude'] } } }, 'agents.claude.program', 'is not a known setting'],
  ])('rejects %j at %s', (raw, path, detail) => {
    let caught: unknown;
    try {
      resolveRaw(raw);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigFieldError);
    expect((caught as ConfigFieldError).path).toBe(path);
    expect((caught as ConfigFieldError).detail).toBe(detail);
    expect((caught as Error).message).toBe(`${path}: ${detail} (in /etc/berth.yaml)`);
  });
});

describe('loadConfig', () => {
  it('uses the built-in defaults when the data dir has no berth.yaml', () => {
    const cfg = loadConfig({ dataDir: tempDir(), installRoot });
    expect(cfg.source).toBeNull();
    expect(Object.keys(cfg.agents)).toEqual(['demo', 'demo-acp', 'claude', 'codex', 'gemini', 'opencode']);
  });

  it('reads <dataDir>/berth.yaml', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'berth.yaml'), 'agents:\n  echo:\n    command: [echo, hi]\n');
    const cfg = loadConfig({ dataDir: dir, installRoot });
    expect(cfg.source).toBe(join(dir, 'berth.yaml'));
    expect(cfg.agents.echo?.command).toEqual(['echo', 'hi']);
  });

  it('fails when an explicit --config file does not exist', () => {
    expect(() => loadConfig({ dataDir: tempDir(), path: '/nonexistent/berth.yaml', installRoot })).toThrow(
      'config /nonexistent/berth.yaml: file not found',
    );
  });

  it.each([
    // the parser notices the missing quote at the end of the document
    ['an unclosed quote', 'agents:\n  x:\n    command: ["sk-live-SECRET]\n', 4],
    ['a duplicate key', 'agents: {}\nagents: {}\n', 2],
    ['bad indentation', 'agents:\n  x:\n command: [a]\n   env: 1\n', null],
  ])('reports %s with a position and without echoing file content', (_what, text, line) => {
    const dir = tempDir();
    const file = join(dir, 'berth.yaml');
    writeFileSync(file, text);
    let caught: unknown;
    try {
      loadConfig({ dataDir: dir, installRoot });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigFileError);
    const err = caught as ConfigFileError;
    if (line !== null) expect(err.line).toBe(line);
    expect(err.line, 'every YAML error carries a position').not.toBeNull();
    expect(err.message).toMatch(/invalid YAML/);
    expect(err.message).not.toContain('SECRET');
    expect(err.message).not.toContain('command');
  });

  it('rejects a YAML document that is not a map', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'berth.yaml'), '- a\n- b\n');
    expect(() => loadConfig({ dataDir: dir, installRoot })).toThrow(ConfigFieldError);
  });
});

describe('kubernetes executors and profiles', () => {
  /** The berth.yaml shape users and the docs rely on, as written in the README. */
  const BERTH_YAML = `executors:
  cluster:
    type: kubernetes
    auth_mode: kubeconfig
    kubeconfig_path: kube/config
    kube_context: my-context
    namespace: agents
    request_timeout_seconds: 30
profiles:
  k8s:
    executor: cluster
    env: { FOO: bar }
    kubernetes:
      platform: linux/amd64
      main_container: agent
      pod_template: |
        spec:
          containers:
            - name: agent
              image: registry.example/agent:1.2
      workspace:
        mode: managed_pvc
        size: 10Gi
        storage_class: standard
        access_modes: [ReadWriteOnce]
      setup_script: "npm ci"
      cleanup_script: ""
      timeouts:
        pvc_binding_seconds: 120
        scheduling_seconds: 60
        image_pull_seconds: 300
        container_start_seconds: 120
  from-file:
    executor: cluster
    kubernetes:
      pod_template_file: ./pod.yaml
      workspace: { mode: existing_claim, claim_name: team-claim }
`;
  const TEMPLATE = 'spec:\n  containers:\n    - name: agent\n      image: registry.example/agent:1.2\n';
  const k8s = (kubernetes: Record<string, unknown>, executor: Record<string, unknown> = {}) => ({
    executors: { cluster: { type: 'kubernetes', ...executor } },
    profiles: { k8s: { executor: 'cluster', kubernetes } },
  });

  it('reads the documented berth.yaml shape end to end', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'berth.yaml'), BERTH_YAML);
    writeFileSync(join(dir, 'pod.yaml'), 'apiVersion: v1\nkind: Pod\nspec:\n  containers: [{ name: agent, image: busybox }]\n');
    const cfg = loadConfig({ dataDir: dir, installRoot });

    const connection = { authMode: 'kubeconfig', kubeconfigPath: join(dir, 'kube/config'), kubeContext: 'my-context', namespace: 'agents', requestTimeoutSeconds: 30 };
    expect(cfg.executors.cluster).toEqual({ name: 'cluster', type: 'kubernetes', connection, ...connection, egressProxy: null, secretEnv: [], description: '' });

    const profile = cfg.profiles.k8s;
    expect(profile).toMatchObject({ name: 'k8s', executor: 'cluster', env: { FOO: 'bar' } });
    expect(profile?.kubernetes).toMatchObject({
      platform: 'linux/amd64',
      mainContainer: 'agent',
      templateText: TEMPLATE,
      workspace: { mode: 'managed_pvc', size: '10Gi', storageClass: 'standard', accessModes: ['ReadWriteOnce'], claimName: null },
      setupScript: 'npm ci',
      cleanupScript: '',
      budgets: { pvcBindingSeconds: 120, schedulingSeconds: 60, imagePullSeconds: 300, containerStartSeconds: 120, uploadSeconds: 300, cloneSeconds: 600, setupScriptSeconds: 600 },
    });
    expect(profile?.kubernetes?.template.spec?.containers[0]?.image).toBe('registry.example/agent:1.2');

    const fromFile = cfg.profiles['from-file']?.kubernetes;
    expect(fromFile?.template.spec?.containers[0]?.image, 'pod_template_file is read relative to berth.yaml').toBe('busybox');
    expect(fromFile?.workspace).toEqual({ mode: 'existing_claim', size: null, storageClass: null, accessModes: [], claimName: 'team-claim' });
  });

  it('fills in the defaults of a minimal executor and profile', () => {
    const cfg = resolveConfig(k8s({ pod_template: TEMPLATE }), { source: '/etc/berth.yaml', installRoot });
    expect(cfg.executors.cluster).toMatchObject({
      connection: { authMode: 'kubeconfig', kubeconfigPath: null, kubeContext: null, namespace: 'default', requestTimeoutSeconds: 30 },
    });
    expect(cfg.profiles.k8s?.kubernetes).toMatchObject({
      platform: 'linux/amd64',
      mainContainer: 'agent',
      workspace: { mode: 'managed_pvc', size: '10Gi', storageClass: null, accessModes: ['ReadWriteOnce'], claimName: null },
      setupScript: '',
      cleanupScript: '',
      budgets: { pvcBindingSeconds: 120, schedulingSeconds: 60, imagePullSeconds: 300, containerStartSeconds: 120, uploadSeconds: 300, cloneSeconds: 600, setupScriptSeconds: 600 },
    });
  });

  it('expands ~/ in kubeconfig_path and keeps absolute paths', () => {
    const opts = { source: '/etc/berth.yaml', installRoot, homeDir: '/home/me' };
    expect(resolveConfig(k8s({ pod_template: TEMPLATE }, { kubeconfig_path: '~/.kube/prod' }), opts).executors.cluster).toMatchObject({
      kubeconfigPath: '/home/me/.kube/prod',
    });
    expect(resolveConfig(k8s({ pod_template: TEMPLATE }, { kubeconfig_path: '/srv/kube' }), opts).executors.cluster).toMatchObject({ kubeconfigPath: '/srv/kube' });
  });

  it('names the pod_template_file field in errors of the file’s template', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'pod.yaml'), `${TEMPLATE}      command: [sh]\n`);
    const raw = k8s({ pod_template_file: 'pod.yaml' });
    expect(() => resolveConfig(raw, { source: join(dir, 'berth.yaml'), installRoot })).toThrow(
      `profiles.k8s.kubernetes.pod_template_file.spec.containers[0].command: is reserved for Berth (in ${join(dir, 'berth.yaml')})`,
    );
    rmSync(join(dir, 'pod.yaml'));
    expect(() => resolveConfig(raw, { source: join(dir, 'berth.yaml'), installRoot })).toThrow(
      `profiles.k8s.kubernetes.pod_template_file: file not found (${join(dir, 'pod.yaml')})`,
    );
  });

  it.each([
    [{ executors: { cluster: { type: 'kubernetes' } }, profiles: { k8s: { executor: 'cluster' } } }, 'profiles.k8s.kubernetes', 'is required for a profile of a kubernetes executor'],
    [{ profiles: { p: { executor: 'local', kubernetes: { pod_template: TEMPLATE } } } }, 'profiles.p.kubernetes', "is only allowed on a profile of a kubernetes executor ('local' is local)"],
    [k8s({ pod_template: TEMPLATE, pod_template_file: 'pod.yaml' }), 'profiles.k8s.kubernetes.pod_template_file', 'cannot be set together with pod_template (choose one)'],
    [k8s({}), 'profiles.k8s.kubernetes.pod_template', 'is required (or pod_template_file)'],
    [k8s({ pod_templat: TEMPLATE }), 'profiles.k8s.kubernetes.pod_templat', "is not a known setting (did you mean 'pod_template'?)"],
    [k8s({ pod_template: TEMPLATE, workspace: { mode: 'managed_pvc', sise: '1Gi' } }), 'profiles.k8s.kubernetes.workspace.sise', "is not a known setting (did you mean 'size'?)"],
    [k8s({ pod_template: TEMPLATE, timeouts: { image_pull: 10 } }), 'profiles.k8s.kubernetes.timeouts.image_pull', 'is not a known setting'],
    [k8s({ pod_template: TEMPLATE, workspace: { size: 10 } }), 'profiles.k8s.kubernetes.workspace.size', 'must be a Kubernetes quantity such as 10Gi'],
    [k8s({ pod_template: TEMPLATE, workspace: { size: '0Gi' } }), 'profiles.k8s.kubernetes.workspace.size', 'must be a positive Kubernetes quantity'],
    [k8s({ pod_template: { spec: {} } }), 'profiles.k8s.kubernetes.pod_template', 'must be a string (write the template as a YAML block: pod_template: |)'],
    [k8s({ pod_template: TEMPLATE.replace('image:', 'imagee:') }), 'profiles.k8s.kubernetes.pod_template.spec.containers[0].imagee', "is not a known field (did you mean 'image'?)"],
    [k8s({ pod_template: TEMPLATE, platform: 'windows/amd64' }), 'profiles.k8s.kubernetes.platform', 'must be linux/amd64 or linux/arm64'],
    [k8s({ pod_template: TEMPLATE }, { namespace: 'Agents' }), 'executors.cluster.namespace', 'must be a valid Kubernetes namespace'],
    [k8s({ pod_template: TEMPLATE }, { auth_mode: 'in_cluster', kube_context: 'x' }), 'executors.cluster.kube_context', 'must be empty for in-cluster auth'],
    [k8s({ pod_template: TEMPLATE }, { auth_mode: 'token' }), 'executors.cluster.auth_mode', 'must be "kubeconfig" or "in_cluster"'],
    [{ ...k8s({ pod_template: TEMPLATE }), defaults: { executor: 'cluster' } }, 'defaults.executor', "'cluster' is a kubernetes executor (a cluster connection) and has no Pod template: name one of its profiles instead (k8s)"],
  ])('rejects %j at %s', (raw, path, detail) => {
    let caught: unknown;
    try {
      resolveRaw(raw);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigFieldError);
    expect([(caught as ConfigFieldError).path, (caught as ConfigFieldError).detail]).toEqual([path, detail]);
  });

  it('keeps profile env values out of the recorded profile snapshot', () => {
    const cfg = resolveRaw({ ...k8s({ pod_template: TEMPLATE }), profiles: { k8s: { executor: 'cluster', env: { TOKEN: 'sk-live-SECRET' }, kubernetes: { pod_template: TEMPLATE } } } });
    const profile = cfg.profiles.k8s?.kubernetes;
    expect(profile).not.toBeNull();
    const snapshot = encodeProfileSnapshot(profile!);
    expect(snapshot).not.toContain('SECRET');
    expect(decodeProfileSnapshot(snapshot)).toEqual(profile);
  });

  it('accepts a kubernetes profile as the default executor', () => {
    expect(resolveRaw({ ...k8s({ pod_template: TEMPLATE }), defaults: { executor: 'k8s' } }).defaults.executor).toBe('k8s');
  });
});

describe('directLaunchProblem', () => {
  it('lets profiles and local executors be launched by name', () => {
    const cfg = resolveRaw({
      executors: { cluster: { type: 'kubernetes' } },
      profiles: { k8s: { executor: 'cluster', kubernetes: { pod_template: 'spec:\n  containers: [{ name: agent, image: x }]\n' } } },
    });
    expect(directLaunchProblem(cfg, 'k8s')).toBeNull();
    expect(directLaunchProblem(cfg, 'local')).toBeNull();
    expect(directLaunchProblem(cfg, 'unknown'), 'unknown names are reported by the lookup itself').toBeNull();
  });

  it('names the fix when a kubernetes executor is launched directly', () => {
    const withProfile = resolveRaw({
      executors: { cluster: { type: 'kubernetes' } },
      profiles: { k8s: { executor: 'cluster', kubernetes: { pod_template: 'spec:\n  containers: [{ name: agent, image: x }]\n' } } },
    });
    expect(directLaunchProblem(withProfile, 'cluster')).toBe(
      "'cluster' is a kubernetes executor (a cluster connection) and has no Pod template: name one of its profiles instead (k8s)",
    );
    const bare = resolveRaw({ executors: { cluster: { type: 'kubernetes' } } });
    expect(directLaunchProblem(bare, 'cluster')).toBe(
      `'cluster' is a kubernetes executor (a cluster connection) and has no Pod template: add a profile with "executor: cluster" and a "kubernetes:" block, then name that profile`,
    );
  });
});
