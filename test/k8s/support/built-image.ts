/**
 * An image `cluster.sh build-images KIND` builds and imports into the test cluster's containerd on
 * first use (serialized by a lock in the cluster's cache, so parallel test files build it once;
 * later calls find it built and imported and return at once). Progress goes to stderr.
 * @module
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireEnv } from './env.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLUSTER_SH = join(ROOT, 'test', 'cluster', 'cluster.sh');

/** `kind`'s image reference (`<repository>:<tag>`), memoized per process (a failure lets a later call try again). */
export function builtImage(kind: 'agents' | 'controller', repository: string, timeoutMs: number): () => Promise<string> {
  let pending: Promise<string> | undefined;
  return () =>
    (pending ??= build(kind, repository, timeoutMs).catch((err: unknown) => {
      pending = undefined;
      throw err;
    }));
}

function build(kind: string, repository: string, timeoutMs: number): Promise<string> {
  // The cluster the tests use is the one whose cache cluster.sh builds into.
  const cache = requireEnv('BERTH_CLUSTER_CACHE');
  return new Promise<string>((resolve, reject) => {
    const child = spawn('bash', [CLUSTER_SH, 'build-images', kind], { cwd: ROOT, env: { ...process.env, BERTH_CLUSTER_CACHE: cache }, stdio: ['ignore', 'pipe', 'pipe'] });
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
      reject(new Error(`cluster.sh build-images ${kind} did not finish within ${timeoutMs / 60_000} min`));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ref = stdout.trim().split('\n').at(-1) ?? '';
      if (code === 0 && ref.startsWith(`${repository}:`)) resolve(ref);
      else reject(new Error(`cluster.sh build-images ${kind} failed (exit ${code ?? signal}):\n${stderrTail}`));
    });
  });
}
