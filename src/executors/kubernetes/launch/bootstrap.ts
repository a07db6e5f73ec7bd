/**
 * Stage `bootstrap` (spec §5, improved): one exec whose stdin carries every file — runtime.env,
 * auth.env (memory-backed volume only), prepare.sh, the clone credential helper, agentctl for the
 * image (bundle or SEA + its libraries) and its launcher — then the start marker; the same exec
 * then runs prepare.sh (the clone, the setup script) in the Pod and waits for it, so the stage ends
 * with the workspace ready and a prepare failure is reported with its output at once. The exec
 * prints one line when the marker is written: the connect (start-pod.ts) starts then, while the
 * clone runs. A local-path
 * repository travels the same way, as a git bundle. Where the image was probed before, the first
 * exec is started while the Pod comes up (pod-ready.ts) and only awaited here.
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { RepositorySpec } from '../../executor.js';
import { LaunchError } from '../../launch-kit/index.js';
import { STAGE } from '../constants.js';
import { AGENTCTL_STARTING_LINE, bootstrapPlans, bootstrapUpload, lineWatcher, compressedUploadScript, EXIT_PROBE_MISMATCH, EXIT_UPLOAD_PREPARE_FAILED, prepareScript, type RepositorySource, type UploadFile } from '../compose/index.js';
import type { ExecResult } from '../kube/index.js';
import type { AgentctlDelivery } from '../artifacts.js';
import type { KubeLaunchState } from './context.js';

const run = promisify(execFile);

interface BootstrapOptions {
  pod: string;
  nonce: string;
  delivery: AgentctlDelivery;
  /** A fresh workspace clones; a replacement Pod on a retained volume keeps what is there. */
  clone: boolean;
  /** The image has gzip: the upload goes compressed. */
  compress: boolean;
  /** Called once the start marker is written (agentctl starts while prepare.sh still runs). */
  onAgentctlStarting?: () => void;
  /** Follows the steps and enforces their budgets: gets every exec's stdout, aborts the execs. */
  progress?: { onStdout: (chunk: Buffer) => void; signal: AbortSignal };
}

/** Extra time the in-Pod `timeout` of a step gets over its budget: the controller's deadline comes first. */
export const POD_LIMIT_GRACE_SECONDS = 15;

/** Compressed copies of large constant chunks (agentctl, its libraries), made once per file version. */
const compressedChunks = new WeakMap<ArrayBufferLike, Promise<Buffer>>();
const CACHE_MIN_BYTES = 64 * 1024;
const gzipAsync = promisify(gzip);

/** Above this size a constant chunk is compressed fast (level 1) rather than small (level 6). */
const FAST_GZIP_MIN_BYTES = 8 << 20;

/**
 * gzip of one upload chunk, off the event loop; large whole-buffer chunks (read from disk once) are
 * compressed once. Level 1 for the SEA binary (~90 MB, ~3x smaller in about a second); level 6 for
 * the bundle and its code cache (~0.5 MB with level 1, 17% less with level 6: ~50 ms of compression
 * once per controller, a smaller upload on every launch).
 */
function gzipChunk(chunk: Buffer): Promise<Buffer> {
  const whole = chunk.byteOffset === 0 && chunk.length === chunk.buffer.byteLength && chunk.length >= CACHE_MIN_BYTES;
  if (!whole) return gzipAsync(chunk, { level: 6 });
  let out = compressedChunks.get(chunk.buffer);
  if (out === undefined) {
    out = gzipAsync(chunk, { level: chunk.length >= FAST_GZIP_MIN_BYTES ? 1 : 6 });
    compressedChunks.set(chunk.buffer, out);
    out.catch(() => compressedChunks.delete(chunk.buffer));
  }
  return out;
}

/** Where the repository comes from, as prepare.sh sees it (a local path becomes a bundle). */
export function repositorySource(repo: RepositorySpec, clone: boolean, hasCredentials: boolean): RepositorySource {
  if (!clone) return { kind: 'none' };
  if (repo.url !== undefined) return { kind: 'url', url: repo.url, branch: repo.branch ?? null, credentials: hasCredentials };
  // the host path as origin: the other branches stay reachable as origin/* (as in a local session)
  if (repo.path !== undefined) return { kind: 'bundle', branch: repo.branch ?? null, originUrl: repo.path };
  return { kind: 'none' };
}

/** `git bundle` of a local repository (every branch and tag, with history). */
export async function localRepositoryBundle(path: string, signal?: AbortSignal): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'berth-bundle-'));
  try {
    const file = join(dir, 'repo.bundle');
    await run('git', ['-C', path, 'bundle', 'create', file, '--branches', '--tags', 'HEAD'], { timeout: 120_000, maxBuffer: 1 << 20, ...(signal ? { signal } : {}) }).catch((err: unknown) => {
      const stderr = (err as { stderr?: string }).stderr ?? String(err);
      throw new LaunchError(STAGE.bootstrap, 'RepositoryBundleFailed', `cannot bundle the local repository ${path}: ${stderr.trim().slice(-400)}`);
    });
    return await readFile(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One exec of the bootstrap: `sh -c <script>` with its stdin (compressed where the image has gzip). */
export interface BootstrapExec {
  command: string[];
  stdin: Buffer[];
  /** The stdout listener: the progress's, and on the last exec the start marker's. */
  onStdout?: (chunk: Buffer) => void;
  /** Ends the exec (a step outlived its budget). */
  signal?: AbortSignal;
}

/** The bootstrap's guard found the image changed since its probe (see probeGuard): probe again. */
export class ProbeMismatchError extends Error {
  override readonly name = 'ProbeMismatchError';
}

/**
 * The bootstrap's execs, in order (a local repository's bundle first, then everything else). `guard`
 * leads the first one: the checks of a remembered probe (the exec then doubles as the first one).
 */
export async function bootstrapExecs(l: KubeLaunchState, opts: Omit<BootstrapOptions, 'pod'> & { guard?: string }): Promise<BootstrapExec[]> {
  const { req } = l;
  const source = repositorySource(req.repository, opts.clone, req.repositoryCredentials !== undefined);
  const repoBundle = source.kind === 'bundle' && req.repository.path !== undefined ? await localRepositoryBundle(req.repository.path, l.signal) : null;
  const plans = bootstrapPlans({
    identity: l.identity,
    flavor: opts.delivery.flavor,
    bootstrapNonce: opts.nonce,
    prepareScript: prepareScript({
      source,
      setupScript: opts.clone ? l.profile.setupScript : '',
      limits: { cloneSeconds: l.profile.budgets.cloneSeconds + POD_LIMIT_GRACE_SECONDS, setupScriptSeconds: l.profile.budgets.setupScriptSeconds + POD_LIMIT_GRACE_SECONDS },
    }),
    ...(req.repositoryCredentials && opts.clone ? { repositoryCredentials: req.repositoryCredentials } : {}),
    ...(repoBundle ? { repoBundle } : {}),
    agentctl: opts.delivery.tail,
    extraFiles: opts.delivery.files.map((f): UploadFile => ({ path: f.path, mode: f.mode, data: f.data })),
    waitForPrepare: true,
    passEnv: (l.mainContainer?.env ?? []).map((e) => e.name),
  });
  return Promise.all(
    plans.map(async (plan, i) => {
      const plain = bootstrapUpload(plan);
      const cmd = opts.compress ? { script: compressedUploadScript(plain.script), stdin: await Promise.all(plain.stdin.map(gzipChunk)) } : plain;
      const starting = i === plans.length - 1 ? opts.onAgentctlStarting : undefined;
      const listeners = [...(starting ? [lineWatcher(AGENTCTL_STARTING_LINE, starting)] : []), ...(opts.progress ? [opts.progress.onStdout] : [])];
      return {
        command: ['sh', '-c', `${i === 0 ? (opts.guard ?? '') : ''}${cmd.script}`],
        stdin: cmd.stdin,
        ...(listeners.length > 0 ? { onStdout: (chunk: Buffer) => listeners.forEach((f) => f(chunk)) } : {}),
        ...(opts.progress ? { signal: opts.progress.signal } : {}),
      };
    }),
  );
}

/**
 * Runs the bootstrap's execs in the main container. `first`: the first one, already accepted by
 * the container (started while the Pod was coming up), whose end is awaited here.
 */
export async function runBootstrap(l: KubeLaunchState, pod: string, execs: readonly BootstrapExec[], first?: Promise<ExecResult>): Promise<void> {
  for (const [i, exec] of execs.entries()) {
    const res =
      i === 0 && first !== undefined
        ? await first
        : await l.kube.exec.exec({
            namespace: l.namespace,
            pod,
            container: l.profile.mainContainer,
            command: exec.command,
            stdin: exec.stdin,
            ...(exec.onStdout ? { onStdout: exec.onStdout } : {}),
            ...execSignal(l.signal, exec.signal),
          });
    if (res.exitCode === EXIT_PROBE_MISMATCH && i === 0) throw new ProbeMismatchError(`the image in ${pod} changed since it was probed`);
    if (res.exitCode === EXIT_UPLOAD_PREPARE_FAILED) {
      throw new LaunchError(STAGE.bootstrap, 'PrepareFailed', `preparing the workspace failed (clone or setup_script): ${lastLines(res.stderr, 15)}`);
    }
    if (res.exitCode !== 0) {
      throw new LaunchError(STAGE.bootstrap, 'UploadFailed', `the bootstrap upload exited with ${res.exitCode}: ${lastLines(res.stderr, 10)}`);
    }
  }
}

export async function bootstrapPod(l: KubeLaunchState, opts: BootstrapOptions): Promise<void> {
  await runBootstrap(l, opts.pod, await bootstrapExecs(l, opts));
}

function execSignal(...signals: (AbortSignal | undefined)[]): { signal?: AbortSignal } {
  const set = signals.filter((s): s is AbortSignal => s !== undefined);
  if (set.length === 0) return {};
  return { signal: set.length === 1 ? (set[0] as AbortSignal) : AbortSignal.any(set) };
}

function lastLines(text: string, n: number): string {
  const lines = text.trim().split('\n');
  return lines.slice(-n).join('\n') || '(no output)';
}
