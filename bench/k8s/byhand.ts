/**
 * The by-hand baseline of issue 11 (figure 2): what a user does without Berth to get agentctl
 * serving in a Pod with a workspace volume, step by step, with `kubectl` only — the real kubectl
 * of the cluster's version, built into the test-cluster binary as `kube kubectl` (see
 * test/cluster/kube/main.go). No Berth code runs here: every step is one kubectl command, timed
 * from spawn to its end with `performance.now()`:
 *
 * 1. `apply`        — `kubectl apply -f -` of a 1Gi PVC (the default StorageClass, as Berth's
 *                     managed PVC) and a Pod mounting it at /workspace (agent image, `sleep`),
 * 2. `wait_ready`   — `kubectl wait --for=condition=Ready pod/NAME`,
 * 3. `copy`         — `kubectl cp dist/agentctl.cjs NAME:/tmp/agentctl.cjs` (the image has tar),
 * 4. `start`        — `kubectl exec NAME -- sh -c 'AGENTCTL_PORT=8765 nohup node … &; until …'`:
 *                     agentctl in the background, the exec returning once agentctl has logged
 *                     "agentctl listening" (kubectl port-forward exits at the first connection the
 *                     Pod refuses, so a script must not forward before agentctl listens),
 * 5. `port_forward` — `kubectl port-forward pod/NAME :8765` until it prints its local port,
 * 6. `first_health` — GET /health through that port until one answers 200 (25 ms between
 *                     attempts; one is the rule, agentctl already listens).
 *
 * Then `kubectl delete pod/NAME pvc/NAME --wait` (timed apart, not part of the total).
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { restrictedPod } from '../../test/k8s/support/pods.js';

export const STEPS = ['apply', 'wait_ready', 'copy', 'start', 'port_forward', 'first_health'] as const;
export type Step = (typeof STEPS)[number];

/** Berth's agentctl control port (src/executors/kubernetes/constants.ts AGENTCTL_PORT). */
export const AGENTCTL_PORT = 8765;
const CONTAINER = 'main';
const RETRY_MS = 25;
const STEP_TIMEOUT_MS = 120_000;

/** How to run kubectl: an executable and the arguments before kubectl's own (`kube kubectl`). */
export interface Kubectl {
  file: string;
  prefix: string[];
  /** Environment of every kubectl child (KUBECONFIG, KUBECACHEDIR). */
  env: NodeJS.ProcessEnv;
}

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** One kubectl command to its end; `stdin` is written and closed. Rejects on a non-zero exit. */
export function kubectl(k: Kubectl, args: string[], stdin?: string): Promise<KubectlResult> {
  const t0 = performance.now();
  const child = spawn(k.file, [...k.prefix, ...args], { env: k.env, stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  if (stdin !== undefined) child.stdin?.end(stdin);
  const timer = setTimeout(() => child.kill('SIGKILL'), STEP_TIMEOUT_MS);
  return new Promise((resolve, reject) => {
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      const r = { code, stdout, stderr, ms: performance.now() - t0 };
      if (code === 0) resolve(r);
      else reject(new Error(`kubectl ${args.join(' ')} exited with ${String(code)}: ${stderr.trim().slice(-800)}`));
    });
  });
}

/** The PVC and Pod of one run, as one `v1 List` (JSON is YAML: `kubectl apply -f -` reads it). */
export function manifest(name: string, image: string): string {
  const pvc = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    // no storageClassName: the cluster's default class, as Berth's managed PVC without storage_class
    spec: { accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem', resources: { requests: { storage: '1Gi' } } },
  };
  const pod = restrictedPod({
    name,
    containerName: CONTAINER,
    image,
    imagePullPolicy: 'Never',
    command: ['sleep', 'infinity'],
    workingDir: '/workspace',
    terminationGracePeriodSeconds: 0,
    volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName: name } }],
    volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
  });
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [pvc, pod] });
}

/**
 * The script the `start` step runs in the container: agentctl in the background (no bootstrap
 * nonce: no handshake, /health only), then a 20 ms poll of its log until it listens (or it died:
 * its log on stderr, exit 1; or 30 s passed).
 */
export const START_SCRIPT = [
  `AGENTCTL_PORT=${String(AGENTCTL_PORT)} nohup node /tmp/agentctl.cjs >/tmp/agentctl.log 2>&1 &`,
  'pid=$! i=0',
  "until grep -q 'agentctl listening' /tmp/agentctl.log; do",
  '  if ! kill -0 $pid 2>/dev/null || [ $i -ge 1500 ]; then cat /tmp/agentctl.log >&2; exit 1; fi',
  '  i=$((i + 1)); sleep 0.02',
  'done',
].join('\n');

export interface ByHandSample {
  /** Duration of each step, ms. */
  steps: Record<Step, number>;
  /** The `apply` spawn → the first 200 from /health, ms. */
  total: number;
  /** GET /health attempts until the first 200. */
  healthAttempts: number;
  /** `kubectl delete pod/NAME pvc/NAME --wait`, ms (not in the total). */
  deleteMs: number;
}

/** `kubectl port-forward`, resolved once it printed its local port (the child keeps running). */
function portForward(k: Kubectl, ns: string, name: string): { child: ChildProcess; port: Promise<number> } {
  const child = spawn(k.file, [...k.prefix, 'port-forward', '-n', ns, `pod/${name}`, `:${String(AGENTCTL_PORT)}`], { env: k.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const port = new Promise<number>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(out);
      if (m) resolve(Number(m[1]));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`kubectl port-forward exited with ${String(code)} before forwarding: ${out.trim().slice(-800)}`)));
  });
  return { child, port };
}

/** One GET /health on 127.0.0.1:port: true for a 200. */
function healthOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', method: 'GET', agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode === 200));
      res.once('error', () => resolve(false));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
    req.end();
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(5000).then(() => child.kill('SIGKILL'))]);
}

/** One by-hand run in `ns` under the name `name` (PVC and Pod); deletes both before it returns, also on failure. */
export async function byHandRun(k: Kubectl, ns: string, name: string, image: string, agentctlBundle: string): Promise<ByHandSample> {
  const steps = {} as Record<Step, number>;
  let forward: ChildProcess | undefined;
  let deleteMs = Number.NaN;
  try {
    const t0 = performance.now();
    steps.apply = (await kubectl(k, ['apply', '-n', ns, '-f', '-'], manifest(name, image))).ms;
    steps.wait_ready = (await kubectl(k, ['wait', '-n', ns, '--for=condition=Ready', `pod/${name}`, '--timeout=120s'])).ms;
    steps.copy = (await kubectl(k, ['cp', '-n', ns, '-c', CONTAINER, agentctlBundle, `${name}:/tmp/agentctl.cjs`])).ms;
    steps.start = (await kubectl(k, ['exec', '-n', ns, '-c', CONTAINER, name, '--', 'sh', '-c', START_SCRIPT])).ms;
    let t = performance.now();
    const pf = portForward(k, ns, name);
    forward = pf.child;
    const port = await pf.port;
    steps.port_forward = performance.now() - t;
    t = performance.now();
    let healthAttempts = 0;
    for (;;) {
      healthAttempts++;
      if (await healthOnce(port)) break;
      if (forward.exitCode !== null) throw new Error(`kubectl port-forward exited (${String(forward.exitCode)}) before /health answered`);
      if (performance.now() - t > STEP_TIMEOUT_MS) throw new Error(`/health did not answer within ${String(STEP_TIMEOUT_MS)} ms`);
      await sleep(RETRY_MS);
    }
    const end = performance.now();
    steps.first_health = end - t;
    await stopChild(forward);
    const d = await kubectl(k, ['delete', '-n', ns, `pod/${name}`, `pvc/${name}`, '--wait=true', '--timeout=120s']);
    deleteMs = d.ms;
    return { steps, total: end - t0, healthAttempts, deleteMs };
  } finally {
    if (forward) await stopChild(forward);
    if (Number.isNaN(deleteMs)) {
      await kubectl(k, ['delete', '-n', ns, `pod/${name}`, `pvc/${name}`, '--ignore-not-found', '--grace-period=0', '--force', '--wait=true', '--timeout=120s']).catch((err: unknown) => {
        console.warn(`cleanup of ${ns}/${name}: ${(err as Error).message}`);
      });
    }
  }
}
