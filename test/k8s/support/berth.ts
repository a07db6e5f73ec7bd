/**
 * A Berth controller wired to the test cluster for the Kubernetes executor tests: a fresh
 * restricted namespace, the executor's ServiceAccount from deploy/rbac.yaml (the tests run as it,
 * never as cluster-admin), a berth.yaml with a kubernetes executor and one profile per case, and a
 * leak check by label selector. `executorOnCluster` is the same setup without a controller: the
 * bare executor of that berth.yaml (the executor contract drives it directly).
 * @module
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { CoreV1Api } from '@kubernetes/client-node';
import { findInstallRoot, loadConfig, type ResolvedConfig } from '../../../src/config/index.js';
import type { Executor } from '../../../src/executors/executor.js';
import { createExecutors, type ExecutorDeps } from '../../../src/controller/executor-factory.js';
import { silentLogger, type Logger } from '../../../src/shared/logger.js';
import { createController, type Controller } from '../../../src/controller/index.js';
import type { SessionView } from '../../../src/controller/service.js';
import { clusterEnv } from './env.js';
import { loadKubeConfig } from './kube.js';
import { createTestNamespace, type PodSecurityLevel, type TestNamespace } from './namespace.js';
import { createExecutorServiceAccount, type ServiceAccountAccess } from './service-account.js';

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

/** Builds the agentctl bundle and the SEA binary (delivered into Pods) when missing or stale. */
export function ensureArtifacts(): void {
  const bundle = join(ROOT, 'dist', 'agentctl.cjs');
  const sea = join(ROOT, 'dist', 'agentctl-sea');
  const stale = (): boolean => !existsSync(bundle) || !existsSync(sea) || statSync(sea).mtimeMs < statSync(bundle).mtimeMs;
  if (!stale()) return;
  // Test files run in parallel: one builds, the others wait for it and then find the build fresh.
  withBuildLock(() => {
    if (!existsSync(bundle)) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'ignore' });
    if (!stale()) return;
    const res = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-sea.mjs')], { cwd: ROOT, encoding: 'utf8', timeout: 240_000 });
    if (res.status !== 0) throw new Error(`npm run build:sea failed (${res.status}): ${res.stderr.slice(-2000)}`);
  });
}

/** Runs `build` holding dist/.test-build.lock (a directory: mkdir is atomic); a lock older than the build's timeout is taken over. */
function withBuildLock(build: () => void): void {
  const lock = join(ROOT, 'dist', '.test-build.lock');
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const wait = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held !== undefined && Date.now() - held.mtimeMs > 300_000) rmSync(lock, { recursive: true, force: true });
      Atomics.wait(wait, 0, 0, 200);
    }
  }
  try {
    build();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export interface BerthOnCluster {
  ns: TestNamespace;
  sa: ServiceAccountAccess;
  admin: KubeConfig;
  core: CoreV1Api;
  dataDir: string;
  configFile: string;
  controller: Controller;
  /** Restarts the controller on the same data dir (a new process's view of the inventory). */
  restart(): Promise<Controller>;
  /** Berth-labelled Pods and PVCs left in the namespace. */
  leftovers(): Promise<string[]>;
  /** The controllers' warn and error log lines so far (for a failing assertion's message). */
  warnings(): string[];
  close(): Promise<void>;
}

/** A logger keeping warn/error lines in memory (bounded), so a test can show what the controller said; every line of every level also goes to `onLog`. */
function memoryLogger(lines: string[], onLog?: (line: string) => void): Logger {
  const line = (level: string, obj: object, msg?: string): string => `${level} ${msg ?? ''} ${JSON.stringify(obj)}`;
  const keep = (level: string) => (obj: object, msg?: string) => {
    const text = line(level, obj, msg);
    onLog?.(text);
    lines.push(text);
    if (lines.length > 200) lines.shift();
  };
  const pass = (level: string) => (obj: object, msg?: string) => onLog?.(line(level, obj, msg));
  return { debug: pass('debug'), info: pass('info'), warn: keep('warn'), error: keep('error') };
}

export interface BerthOnClusterOptions {
  prefix: string;
  podSecurity?: PodSecurityLevel;
  /** Extra berth.yaml `profiles` entries (the `kubernetes` block of each). */
  profiles: Record<string, Record<string, unknown>>;
  /** Extra fields of profile entries, beside `kubernetes` (e.g. `pool`, `idle`). */
  profileFields?: Record<string, Record<string, unknown>>;
  /** Extra berth.yaml top-level `agents`. */
  agents?: Record<string, unknown>;
  /** Other top-level berth.yaml blocks (e.g. `egress`). */
  topLevel?: Record<string, unknown>;
  /** Extra fields of the `cluster` executor entry (e.g. `secret_env`). */
  executor?: Record<string, unknown>;
  /** The controller's environment (the source of approved secret env values). @default {} */
  controllerEnv?: Record<string, string>;
  /** Called with every controller log line, of every level (debug included). */
  onLog?: (line: string) => void;
  /** Rewrites the ServiceAccount kubeconfig the executor uses (e.g. to point it at a test proxy); returns the path to use. */
  kubeconfigFor?: (serviceAccountKubeconfig: string) => string;
}

/** The agent image template: restricted-compatible defaults come from Berth's composition. */
export function imageTemplate(image: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ spec: { containers: [{ name: 'agent', image, imagePullPolicy: 'Never', ...extra }] } });
}

/** A restricted test namespace with the executor's ServiceAccount, and a fresh data dir. */
async function clusterSetup(opts: BerthOnClusterOptions): Promise<{ admin: KubeConfig; ns: TestNamespace; sa: ServiceAccountAccess; dataDir: string }> {
  ensureArtifacts();
  const admin = loadKubeConfig(clusterEnv().kubeconfig);
  const ns = await createTestNamespace(admin, opts.prefix, { podSecurity: opts.podSecurity ?? 'restricted' });
  const sa = await createExecutorServiceAccount(admin, ns.name);
  return { admin, ns, sa, dataDir: mkdtempSync(join(tmpdir(), 'berth-k8s-data-')) };
}

export async function berthOnCluster(opts: BerthOnClusterOptions): Promise<BerthOnCluster> {
  const { admin, ns, sa, dataDir } = await clusterSetup(opts);
  const configFile = writeClusterConfig(dataDir, sa, opts);
  const warnings: string[] = [];
  const logger = memoryLogger(warnings, opts.onLog);
  const open = async (): Promise<Controller> => {
    const c = await createController({ dataDir, config: loadConfig({ dataDir, installRoot: findInstallRoot(join(ROOT, 'src', 'config')) }), env: opts.controllerEnv ?? {}, logger });
    await c.recover();
    return c;
  };
  const core = admin.makeApiClient(CoreV1Api);
  const h: BerthOnCluster = {
    ns,
    sa,
    admin,
    core,
    dataDir,
    configFile,
    controller: await open(),
    async restart() {
      await h.controller.close();
      h.controller = await open();
      return h.controller;
    },
    leftovers: () => labelledLeftovers(core, ns.name),
    warnings: () => [...warnings],
    async close() {
      await h.controller.close().catch(() => undefined);
      await sa.cleanup().catch(() => undefined);
      await ns.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return h;
}

/** berth.yaml in `dataDir`: executor `cluster` (kubernetes, as the ServiceAccount, in its namespace) and one profile per entry. */
export function writeClusterConfig(dataDir: string, sa: ServiceAccountAccess, opts: BerthOnClusterOptions): string {
  const profiles: Record<string, unknown> = {};
  for (const [name, kubernetes] of Object.entries(opts.profiles)) profiles[name] = { executor: 'cluster', kubernetes, ...opts.profileFields?.[name] };
  const configFile = join(dataDir, 'berth.yaml');
  writeFileSync(
    configFile,
    JSON.stringify({
      executors: { cluster: { type: 'kubernetes', kubeconfig_path: opts.kubeconfigFor?.(sa.kubeconfigPath) ?? sa.kubeconfigPath, namespace: sa.namespace, request_timeout_seconds: 30, ...opts.executor } },
      profiles,
      ...(opts.agents ? { agents: opts.agents } : {}),
      ...opts.topLevel,
    }),
  );
  return configFile;
}

/** Berth-labelled Pods and PVCs in `namespace` (narrowed by `selector`, e.g. one session's label). */
export async function labelledLeftovers(core: CoreV1Api, namespace: string, selector = 'app.kubernetes.io/managed-by=berth'): Promise<string[]> {
  const pods = await core.listNamespacedPod({ namespace, labelSelector: selector });
  const pvcs = await core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector: selector });
  return [...pods.items.map((p) => `pod/${p.metadata?.name ?? ''}`), ...pvcs.items.map((p) => `pvc/${p.metadata?.name ?? ''}`)];
}

/** A bare executor (no controller) of berth.yaml's `cluster` entry, as the ServiceAccount: for the executor contract. */
export interface ExecutorOnCluster {
  ns: TestNamespace;
  sa: ServiceAccountAccess;
  core: CoreV1Api;
  config: ResolvedConfig;
  deps: ExecutorDeps;
  executor: Executor;
  /** Another executor of the same config (what a restarted controller builds). */
  reopen(): Executor;
  leftovers(): Promise<string[]>;
  close(): Promise<void>;
}

export async function executorOnCluster(opts: BerthOnClusterOptions): Promise<ExecutorOnCluster> {
  const { admin, ns, sa, dataDir } = await clusterSetup(opts);
  writeClusterConfig(dataDir, sa, opts);
  const config = loadConfig({ dataDir, installRoot: findInstallRoot(join(ROOT, 'src', 'config')) });
  const deps: ExecutorDeps = { dataDir, logger: silentLogger, installRoot: ROOT };
  const build = (): Executor => {
    const executor = createExecutors(config, deps).get('cluster');
    if (!executor) throw new Error('berth.yaml: executor cluster was not built');
    return executor;
  };
  const executor = build();
  const core = admin.makeApiClient(CoreV1Api);
  return {
    ns,
    sa,
    core,
    config,
    deps,
    executor,
    reopen: build,
    leftovers: () => labelledLeftovers(core, ns.name),
    async close() {
      await executor.close().catch(() => undefined);
      await sa.cleanup().catch(() => undefined);
      await ns.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Launches and waits until settled; throws with the session's error when it did not get ready. */
export async function launchReady(c: Controller, req: Parameters<Controller['launch']>[0]): Promise<SessionView> {
  const s = await c.launch(req);
  const v = await c.waitUntilSettled(s.id);
  if (v.state !== 'ready') throw new Error(`session ${s.id} is ${v.state}: ${v.error?.message ?? '(no error)'}; stages: ${JSON.stringify(v.stages)}`);
  return v;
}

/** The demo agent without pauses. */
export const FAST_AGENT_ENV = { BERTH_DEMO_STEP_MS: '0' };

/** Runs argv in the session; stdout/stderr as text. */
export async function execText(c: Controller, id: string, argv: string[]): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const dec = new TextDecoder();
  const r = await c.exec(id, argv, { onOutput: (ch) => (ch.stream === 'stdout' ? (stdout += dec.decode(ch.data)) : (stderr += dec.decode(ch.data))) });
  return { exitCode: r.exitCode, stdout, stderr };
}

/** Follows the agent output until `pattern` matches. */
export async function waitForOutput(c: Controller, id: string, pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  const signal = AbortSignal.timeout(timeoutMs);
  let text = '';
  const dec = new TextDecoder();
  try {
    for await (const chunk of c.logs(id, { follow: true, signal })) {
      text += dec.decode(chunk.data);
      if (pattern.test(text)) return text;
    }
  } catch (err) {
    throw new Error(`output of ${id} did not match ${pattern} (${String(err)}); so far:\n${text}`);
  }
  throw new Error(`output of ${id} ended without matching ${pattern}; so far:\n${text}`);
}
