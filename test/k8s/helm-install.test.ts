// The Helm chart deploy/helm/berth installed on the real test cluster as a user installs it, with
// the default SQLite store: `helm install --wait` of the controller image (test/cluster/images/
// controller.sh) into a restricted namespace, sessions in a second restricted namespace. Everything
// after that goes the user's way: a `kubectl port-forward` of the Service on any free local port,
// the API token read from the chart's Secret, `berth login --token-stdin` into a private CLI config,
// then the remote CLI (launch, exec, logs, stop, resume, rm) against the in-cluster controller,
// whose Kubernetes executor uses its ServiceAccount (auth_mode in_cluster). /metrics shows the launch
// and the sqlite store. Deleting the controller Pod brings a new one on the same PVC that
// reconnects the ready session (same Pod, same agent process, nothing leaked).
// Printed, not asserted: helm install → ready, launch → ready, controller Pod replaced → reachable.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { CLI, ensureBuilt, runCli, type CliResult } from '../integration/cli/helpers.js';
import { CONTROLLER_IMAGE_BUILD_TIMEOUT_MS, CONTROLLER_IMAGE_REPOSITORY, controllerImage } from './support/controller-image.js';
import { clusterEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { forwardService, helm, kubectlOk, removeHelmHome, type ServiceForward } from './support/helm.js';
import { loadKubeConfig } from './support/kube.js';
import { createTestNamespace, type TestNamespace } from './support/namespace.js';

const env = clusterEnv();
const CHART = join(import.meta.dirname, '..', '..', 'deploy', 'helm', 'berth');
const RELEASE = 'team';
const FULLNAME = 'team-berth'; // <release>-<chart name>
const CONTROLLER_SELECTOR = 'app.kubernetes.io/name=berth';
const SESSION_SELECTOR = 'app.kubernetes.io/managed-by=berth';
const MARKER = 'installed-with-helm';
const PROMPT = 'hello from helm';

/** Seconds with one decimal, for the printed measurements. */
const seconds = (ms: number): string => (ms / 1000).toFixed(1);
const measured = (what: string, ms: number): void => console.log(`[helm-install] ${what}: ${seconds(ms)} s`);

/**
 * The values a team would write: the sessions' namespace and agent image, a small workspace PVC.
 * The test cluster has no kube-proxy (Service ClusterIPs do not route), so the controller is
 * pointed at the API server's address on the bridge through extraEnv (what in_cluster auth reads).
 */
function teamValues(kc: KubeConfig, image: string, sessionsNamespace: string): object {
  const server = new URL(kc.getCurrentCluster()?.server ?? '');
  return {
    image: { repository: CONTROLLER_IMAGE_REPOSITORY, tag: image.slice(CONTROLLER_IMAGE_REPOSITORY.length + 1), pullPolicy: 'Never' },
    sessions: {
      namespace: sessionsNamespace,
      podTemplate: { spec: { enableServiceLinks: false, containers: [{ name: 'agent', image: env.agentImage, imagePullPolicy: 'Never' }] } },
      kubernetes: { workspace: { mode: 'managed_pvc', size: '1Gi' } },
    },
    extraEnv: [
      { name: 'KUBERNETES_SERVICE_HOST', value: server.hostname },
      { name: 'KUBERNETES_SERVICE_PORT', value: server.port || '443' },
    ],
    // Two CPUs shared by every test: the defaults' 100m request would still fit, this leaves room.
    resources: { requests: { cpu: '10m', memory: '128Mi' }, limits: { memory: '1Gi' } },
    persistence: { size: '1Gi' },
  };
}

/** The counts of a Prometheus text exposition's samples named `name` whose labels match `labels`. */
function samples(metrics: string, name: string, labels: Record<string, string>): number[] {
  return metrics
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
}

/**
 * The demo agent's process in the session Pod: its pid and start time (/proc/PID/stat field 22).
 * The pattern `demo-agen[t]` does not match this script's own command line.
 */
const AGENT_PROCESS = 'for p in /proc/[0-9]*; do if tr "\\0" " " <$p/cmdline | grep -q "agentctl.cjs demo-agen[t]"; then echo "${p#/proc/} $(cut -d" " -f22 $p/stat)"; fi; done';

describe('the Helm chart installed on the cluster (sqlite)', () => {
  const kc = loadKubeConfig(env.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  let release: TestNamespace;
  let sessions: TestNamespace;
  let repo: TestRepo;
  let work: string;
  let forward: ServiceForward | undefined;
  let server = '';
  let installMs = 0;
  let install: { code: number; stdout: string; stderr: string };
  let id = '';

  /** The remote CLI as a user on their machine runs it: no data dir, its own config and home. */
  const cli = (args: string[], input?: string): Promise<CliResult> =>
    runCli(args, { env: { XDG_CONFIG_HOME: join(work, 'config'), HOME: join(work, 'home') }, ...(input !== undefined ? { input } : {}) });
  const ok = async (args: string[]): Promise<string> => {
    const r = await cli(args);
    expect(r.code, `berth ${args.join(' ')}: ${r.stderr}${r.stdout}`).toBe(0);
    return r.stdout;
  };
  const sessionPods = async (): Promise<{ name: string; uid: string; restarts: number }[]> =>
    (await core.listNamespacedPod({ namespace: sessions.name, labelSelector: SESSION_SELECTOR })).items.map((p) => ({
      name: p.metadata?.name ?? '',
      uid: p.metadata?.uid ?? '',
      restarts: p.status?.containerStatuses?.reduce((n, c) => n + c.restartCount, 0) ?? 0,
    }));
  const metrics = async (): Promise<string> => {
    const res = await fetch(`${server}/metrics`);
    expect(res.status).toBe(200);
    return res.text();
  };

  beforeAll(async () => {
    ensureBuilt();
    const image = await controllerImage(); // built from dist/ and imported the first time
    work = mkdtempSync(join(tmpdir(), 'berth-helm-install-'));
    release = await createTestNamespace(kc, 'helm-release', { podSecurity: 'restricted' });
    sessions = await createTestNamespace(kc, 'helm-sessions', { podSecurity: 'restricted' });
    repo = await createTestRepo('helm-install', { 'README.md': '# installed with helm\n', BERTH_MARKER: `${MARKER}\n` });
    const values = join(work, 'team.yaml');
    writeFileSync(values, stringify(teamValues(kc, image, sessions.name)));
    const t0 = performance.now();
    install = await helm(['install', RELEASE, CHART, '-n', release.name, '-f', values, '--wait', '--timeout', '5m']);
    installMs = performance.now() - t0;
  }, CONTROLLER_IMAGE_BUILD_TIMEOUT_MS + 6 * 60_000);

  afterAll(async () => {
    await forward?.close();
    if (release !== undefined) {
      const r = await helm(['uninstall', RELEASE, '-n', release.name, '--wait', '--timeout', '2m']);
      if (r.code !== 0 && !/not found/.test(r.stderr)) console.error(`helm uninstall failed (${r.code}): ${r.stderr}`);
    }
    await Promise.all([release?.cleanup(), sessions?.cleanup()]);
    await repo?.remove();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
    removeHelmHome();
  }, 300_000);

  it('installs with helm --wait: one ready controller (Recreate, a PVC), /readyz 200 through a port-forward of the Service', async () => {
    expect(install.code, install.stderr).toBe(0);
    measured('helm install --wait → ready', installMs);
    const deploy = JSON.parse(await kubectlOk(['-n', release.name, 'get', 'deploy', FULLNAME, '-o', 'json'])) as {
      spec: { strategy: { type: string }; template: { spec: { containers: { image: string }[] } } };
      status: { readyReplicas?: number };
    };
    expect(deploy.status.readyReplicas).toBe(1);
    expect(deploy.spec.strategy.type).toBe('Recreate');
    expect(deploy.spec.template.spec.containers[0]!.image).toBe(await controllerImage());
    const pvc = await core.readNamespacedPersistentVolumeClaim({ name: `${FULLNAME}-data`, namespace: release.name });
    expect(pvc.status?.phase).toBe('Bound');

    forward = await forwardService(release.name, FULLNAME, 80); // any free local port
    server = `http://127.0.0.1:${forward.port}`;
    const ready = await fetch(`${server}/readyz`);
    expect(ready.status).toBe(200);
    await ready.body?.cancel();
  });

  it("logs in with the token from the chart's Secret, launches a session through the in-cluster controller, execs and reads its logs", async () => {
    const encoded = await kubectlOk(['-n', release.name, 'get', 'secret', `${FULLNAME}-api-token`, '-o', 'jsonpath={.data.token}']);
    const token = Buffer.from(encoded, 'base64').toString('utf8');
    expect(token).toMatch(/^[A-Za-z0-9]{48}$/);
    const login = await cli(['login', '--token-stdin', '--name', RELEASE, server], `${token}\n`);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain(`logged in to ${server} as context ${RELEASE}`);
    expect(login.stdout + login.stderr).not.toContain(token);

    // The chart's profile k8s is defaults.executor: no --executor needed.
    const t0 = performance.now();
    const launch = await cli(['launch', '--repo', repo.url, '--agent', 'demo', '--name', 'helm', '--prompt', PROMPT, '--env', 'BERTH_DEMO_STEP_MS=0']);
    const launchMs = performance.now() - t0;
    expect(launch.code, launch.stdout + launch.stderr).toBe(0);
    id = /Session (\S+) is ready/.exec(launch.stdout)?.[1] ?? '';
    expect(id, launch.stdout).not.toBe('');
    measured('berth launch → ready (in-cluster controller)', launchMs);
    for (const stage of ['storage', 'pod_ready', 'bootstrap', 'agentctl_connect', 'agent_start']) expect(launch.stdout).toMatch(new RegExp(`✓ ${stage}\\s+\\d`));

    expect(await ok(['exec', id, '--', 'cat', 'BERTH_MARKER'])).toBe(`${MARKER}\n`);
    const seven = await cli(['exec', id, '--', 'sh', '-c', 'echo out; exit 7']);
    expect([seven.code, seven.stdout]).toEqual([7, 'out\n']);
    // berth shell: a WebSocket through the Service's port-forward to the in-cluster controller, then its exec in the Pod
    const shell = await cli(['shell', id], 'cat BERTH_MARKER; exit 4\n');
    expect(shell.code, `printf 'cat BERTH_MARKER; exit 4' | berth shell: ${shell.stderr}`).toBe(4);
    expect(shell.stdout).toContain(MARKER);
    const logs = await followUntil(['logs', '-f', id], 'agent> ready for instructions', work);
    expect(logs).toContain(`agent> task: ${PROMPT}`);
    const pods = await sessionPods();
    expect(pods, 'the session Pod runs in the sessions namespace').toHaveLength(1);
    expect(JSON.parse(await ok(['status', id, '-o', 'json']))).toMatchObject({ state: 'ready', executor: 'k8s', agentProcess: { status: 'running' } });
  });

  it('exposes the launch and the sqlite store in /metrics', async () => {
    const text = await metrics();
    const podReady = samples(text, 'berth_launch_stage_duration_seconds_count', { executor: 'kubernetes', stage: 'pod_ready', outcome: 'succeeded' });
    expect(podReady.reduce((a, b) => a + b, 0), 'pod_ready observations after the launch').toBeGreaterThanOrEqual(1);
    const store = samples(text, 'berth_store_operation_duration_seconds_count', { backend: 'sqlite' });
    expect(store.length, 'berth_store_operation_duration_seconds{backend="sqlite"} series').toBeGreaterThan(0);
    expect(store.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(samples(text, 'berth_store_operation_duration_seconds_count', { backend: 'postgres' })).toEqual([]);
  });

  it('keeps the session ready through a replaced controller Pod: same session Pod, same agent process, nothing leaked', async () => {
    const before = JSON.parse(await ok(['status', id, '-o', 'json'])) as { agentProcess: { id: string } };
    const agentBefore = await ok(['exec', id, '--', 'sh', '-c', AGENT_PROCESS]);
    expect(agentBefore, 'the demo agent runs in the session Pod').toMatch(/^\d+ \d+\n$/);
    const podsBefore = await sessionPods();
    const oldController = (await kubectlOk(['-n', release.name, 'get', 'pods', '-l', CONTROLLER_SELECTOR, '-o', 'jsonpath={.items[*].metadata.name}'])).trim();

    const deletedAt = Date.now();
    const t0 = performance.now();
    // `kubectl delete` waits until the old Pod is gone; the ReplicaSet starts its replacement meanwhile.
    await kubectlOk(['-n', release.name, 'delete', 'pod', '-l', CONTROLLER_SELECTOR, '--timeout=120s']);
    const goneMs = performance.now() - t0;
    await forward?.close();
    await kubectlOk(['-n', release.name, 'wait', 'pod', '-l', CONTROLLER_SELECTOR, '--for=condition=Ready', '--timeout=180s'], 200_000);
    // The same local port: the stored login context names it.
    forward = await forwardService(release.name, FULLNAME, 80, forward?.port);
    const after = JSON.parse(await ok(['status', id, '-o', 'json'])) as { state: string; agentProcess: { id: string; status: string } };
    measured('controller Pod deleted → session reachable again', performance.now() - t0);
    await reportOverlap(release.name, deletedAt, goneMs);

    expect(after.state).toBe('ready');
    expect(after.agentProcess).toEqual({ ...before.agentProcess, status: 'running' });
    expect(await ok(['exec', id, '--', 'sh', '-c', AGENT_PROCESS]), 'the agent was not started again').toBe(agentBefore);
    expect(await ok(['exec', id, '--', 'cat', 'BERTH_MARKER'])).toBe(`${MARKER}\n`);
    const logs = await ok(['logs', id]);
    expect(logs.split('agent> ready for instructions').length - 1, 'one run of the agent in its log').toBe(1);

    const controllers = (await kubectlOk(['-n', release.name, 'get', 'pods', '-l', CONTROLLER_SELECTOR, '-o', 'jsonpath={.items[*].metadata.name}'])).trim().split(' ');
    expect(controllers).toHaveLength(1);
    expect(controllers[0]).not.toBe(oldController);
    expect(await sessionPods(), 'the same session Pod, not restarted, and no other').toEqual(podsBefore);
  });

  it('stops, resumes and removes the session through the remote CLI, leaving nothing in the sessions namespace', async () => {
    expect(await ok(['stop', id])).toContain(`Session ${id} is stopped`);
    expect(JSON.parse(await ok(['status', id, '-o', 'json']))).toMatchObject({ state: 'stopped' });
    const resume = await ok(['resume', id]);
    expect(resume).toContain(`berth exec ${id}`);
    expect(JSON.parse(await ok(['status', id, '-o', 'json']))).toMatchObject({ state: 'ready', agentProcess: { status: 'running' } });
    // The workspace PVC was kept: the notes the agent wrote before the stop are still there.
    expect(await ok(['exec', id, '--', 'sh', '-c', 'cat BERTH_MARKER; test -s NOTES.md && echo notes-kept'])).toBe(`${MARKER}\nnotes-kept\n`);
    expect(await sessionPods()).toHaveLength(1);

    const rm = await cli(['rm', id]);
    expect(rm.code, rm.stdout + rm.stderr).toBe(0);
    expect(await sessionPods(), 'rm leaves no session Pod').toEqual([]);
    const pvcs = await core.listNamespacedPersistentVolumeClaim({ namespace: sessions.name, labelSelector: SESSION_SELECTOR });
    expect(pvcs.items.map((p) => p.metadata?.name), 'rm leaves no workspace PVC').toEqual([]);
    expect(JSON.parse(await ok(['ls', '-o', 'json']))).toEqual({ sessions: [] });
  });

  it('launches in sequence through the in-cluster controller (the stages it reports are printed, as bench:k8s does out of the cluster)', async () => {
    const totals: number[] = [];
    for (let i = 0; i < 5; i++) {
      const launch = await cli(['launch', '--repo', repo.url, '--agent', 'demo', '--name', `seq-${i}`, '--env', 'BERTH_DEMO_STEP_MS=0']);
      expect(launch.code, launch.stdout + launch.stderr).toBe(0);
      const sid = /Session (\S+) is ready/.exec(launch.stdout)?.[1] ?? '';
      const view = JSON.parse(await ok(['status', sid, '-o', 'json'])) as { stages: { durationMs: number | null }[] };
      totals.push(view.stages.reduce((sum, st) => sum + (st.durationMs ?? 0), 0));
      expect((await cli(['rm', sid])).code).toBe(0);
    }
    const sorted = [...totals].sort((a, b) => a - b);
    console.log(`[helm-install] launch stages in sum, in-cluster controller: ${totals.join(', ')} ms; p50 ${sorted[2]} ms (bench:k8s out of the cluster: see BENCHMARKS.md)`);
    expect(await sessionPods()).toEqual([]);
  });
});

/** `berth ARGS` (`logs -f`) until `marker` appears, then interrupted as a user would. */
function followUntil(args: string[], marker: string, dir: string): Promise<string> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, BERTH_DATA_DIR: '', XDG_CONFIG_HOME: join(dir, 'config'), HOME: join(dir, 'home') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(marker)) child.kill('SIGINT');
    });
    child.once('close', () => (out.includes(marker) ? resolve(out) : reject(new Error(`berth ${args.join(' ')} ended before ${JSON.stringify(marker)}:\n${out}\n${err}`))));
  });
}

/**
 * Prints whether the new controller ran beside the old one: the ReplicaSet replaces a deleted Pod
 * at once (Recreate orders rollouts only), so its container may start before the old Pod is gone.
 * Both are seconds after the delete (startedAt has whole seconds).
 */
async function reportOverlap(namespace: string, deletedAt: number, oldGoneAfterMs: number): Promise<void> {
  const pods = JSON.parse(await kubectlOk(['-n', namespace, 'get', 'pods', '-l', CONTROLLER_SELECTOR, '-o', 'json'])) as {
    items: { status?: { containerStatuses?: { state?: { running?: { startedAt?: string } } }[] } }[];
  };
  const started = pods.items[0]?.status?.containerStatuses?.[0]?.state?.running?.startedAt;
  if (started === undefined) return;
  console.log(`[helm-install] after the delete: the old controller Pod was gone at ${seconds(oldGoneAfterMs)} s, the new one's container started at ~${seconds(Date.parse(started) - deletedAt)} s`);
}
