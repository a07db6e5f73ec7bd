/**
 * The agents image: the agent image plus the real coding agents' ACP adapters
 * (`claude-agent-acp`, `codex-acp`; test/cluster/images/agents.sh). It is large (≈455 MiB
 * gzipped), so `cluster.sh up` does not build it: the first test that asks for it
 * builds and imports it (`cluster.sh build-images agents`, serialized by a lock in the
 * cluster's cache, so parallel test files build it once); later calls find it built
 * and imported and return at once.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireEnv } from './env.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLUSTER_SH = join(ROOT, 'test', 'cluster', 'cluster.sh');
/** A cold build (npm install of ≈850 MB, gzip, import) took ≈1 min on an idle 2-core machine. */
const BUILD_TIMEOUT_MS = 20 * 60_000;
/** Per-test budget a caller's beforeAll should allow for a first build. */
export const AGENTS_IMAGE_BUILD_TIMEOUT_MS = BUILD_TIMEOUT_MS + 60_000;

let pending: Promise<string> | undefined;

/**
 * The agents image's reference (`localhost/berth/agents:node20.20.2-bookworm-<recipe hash>`),
 * built and imported into the test cluster's containerd on first use. Progress goes to stderr.
 */
export function agentsImage(): Promise<string> {
  pending ??= buildAgentsImage().catch((err: unknown) => {
    pending = undefined; // a later call may try again
    throw err;
  });
  return pending;
}

function buildAgentsImage(): Promise<string> {
  // The cluster the tests use is the one whose cache cluster.sh builds into.
  const cache = requireEnv('BERTH_CLUSTER_CACHE');
  return new Promise<string>((resolve, reject) => {
    const child = spawn('bash', [CLUSTER_SH, 'build-images', 'agents'], {
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
      reject(new Error(`cluster.sh build-images agents did not finish within ${BUILD_TIMEOUT_MS / 60_000} min`));
    }, BUILD_TIMEOUT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ref = stdout.trim().split('\n').at(-1) ?? '';
      if (code === 0 && ref.startsWith('localhost/berth/agents:')) resolve(ref);
      else reject(new Error(`cluster.sh build-images agents failed (exit ${code ?? signal}):\n${stderrTail}`));
    });
  });
}
