/**
 * The controller image: `berth serve` from this checkout's built dist/ and its production
 * node_modules on the agent image's Debian and Node, as uid 1000 (test/cluster/images/controller.sh).
 * Its tag hashes the built product, so a rebuilt dist/ gives a new image. The first test that asks
 * for it builds and imports it (`cluster.sh build-images controller`, serialized by a lock in the
 * cluster's cache, so parallel test files build it once); later calls find it and return at once.
 * dist/ must be built first (`npm run build`, and `npm run build:sea` for dist/agentctl-sea), as
 * scripts/test.sh does before the Kubernetes tests.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireEnv } from './env.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLUSTER_SH = join(ROOT, 'test', 'cluster', 'cluster.sh');
/** A cold build (npm ci --omit=dev with better-sqlite3 compiled, layer, import) took ≈2–10 min on 2 loaded cores. */
const BUILD_TIMEOUT_MS = 15 * 60_000;
/** Per-test budget a caller's beforeAll should allow for a first build. */
export const CONTROLLER_IMAGE_BUILD_TIMEOUT_MS = BUILD_TIMEOUT_MS + 60_000;
export const CONTROLLER_IMAGE_REPOSITORY = 'localhost/berth/controller';

let pending: Promise<string> | undefined;

/**
 * The controller image's reference (`localhost/berth/controller:<package version>-<hash>`), built
 * and imported into the test cluster's containerd on first use. Progress goes to stderr.
 */
export function controllerImage(): Promise<string> {
  pending ??= buildControllerImage().catch((err: unknown) => {
    pending = undefined; // a later call may try again
    throw err;
  });
  return pending;
}

function buildControllerImage(): Promise<string> {
  // The cluster the tests use is the one whose cache cluster.sh builds into.
  const cache = requireEnv('BERTH_CLUSTER_CACHE');
  return new Promise<string>((resolve, reject) => {
    const child = spawn('bash', [CLUSTER_SH, 'build-images', 'controller'], {
      cwd: ROOT,
      env: { ...process.env, BERTH_CLUSTER_CACHE: cache },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderrTail = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      process.stderr.write(chunk);
      stderrTail = (stderrTail + chunk).slice(-4000);
    });
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`cluster.sh build-images controller did not finish within ${BUILD_TIMEOUT_MS / 60_000} min`));
    }, BUILD_TIMEOUT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ref = stdout.trim().split('\n').at(-1) ?? '';
      if (code === 0 && ref.startsWith(`${CONTROLLER_IMAGE_REPOSITORY}:`)) resolve(ref);
      else reject(new Error(`cluster.sh build-images controller failed (exit ${code ?? signal}):\n${stderrTail}`));
    });
  });
}
