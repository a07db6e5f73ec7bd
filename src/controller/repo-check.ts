/**
 * The cheap checks of a launch's repository, run before the session exists so a typo gives a clear
 * error instead of a `failed` row: the local path is a directory git can clone from, a `file://`
 * or `git://` URL answers, the `--branch` exists there. All with `git ls-remote`, which reads a
 * repository the way `git clone` does (a subdirectory of a work tree fails both), bounded by a short
 * timeout.
 *
 * http(s) and ssh URLs are not checked here: ssh can stop at a host-key or password prompt, an
 * http(s) credential is split off the URL and handed to git only by the clone's one-shot helper
 * (a second path for it here would be a second place a secret could leak), and a network round trip
 * would slow every launch for a failure the workspace stage reports just as clearly.
 * @module
 */
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import type { ExecutorCapabilities } from '../executors/executor.js';
import { LaunchValidationError, type RepositoryRef } from './service.js';

/** Deadline of one `git ls-remote`, in ms: local reads are instant; git:// gets a few seconds. */
const TIMEOUT_MS = { local: 15_000, network: 5_000 } as const;

type RepositoryCheckTarget =
  | { kind: 'path'; source: string; field: 'repository.path' }
  | { kind: 'url'; source: string; field: 'repository.url'; timeoutMs: number }
  | null;

/** What of the executor's capabilities the check reads. */
type RepositoryCheckCapabilities = Pick<ExecutorCapabilities, 'clonesOnControllerHost'>;

/**
 * What to check of `repo` (pure): local paths always, `file://` and `git://` URLs only for an
 * executor that clones on this host (in a Pod they name the Pod's file system and network, not
 * this machine's).
 */
export function repositoryCheckTarget(repo: RepositoryRef, capabilities: RepositoryCheckCapabilities): RepositoryCheckTarget {
  if (repo.path !== undefined) return { kind: 'path', source: repo.path, field: 'repository.path' };
  if (repo.url === undefined || !capabilities.clonesOnControllerHost) return null;
  if (/^file:/i.test(repo.url)) return { kind: 'url', source: repo.url, field: 'repository.url', timeoutMs: TIMEOUT_MS.local };
  if (/^git:\/\//i.test(repo.url)) return { kind: 'url', source: repo.url, field: 'repository.url', timeoutMs: TIMEOUT_MS.network };
  return null;
}

/** True when `ls-remote` output (`<sha>\t<ref>` lines) holds branch or tag `branch`. */
export function lsRemoteHasRef(output: string, branch: string): boolean {
  return output.split('\n').some((line) => {
    const ref = line.split('\t')[1]?.trim();
    return ref === `refs/heads/${branch}` || ref === `refs/tags/${branch}` || ref === `refs/tags/${branch}^{}`;
  });
}

/** git's last meaningful stderr line (`fatal: …`), for the error message. */
export function gitReason(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return lines.find((l) => l.startsWith('fatal:')) ?? lines[lines.length - 1] ?? 'git failed';
}

function lsRemote(source: string, refs: string[], timeoutMs: number, env: NodeJS.ProcessEnv): Promise<{ ok: boolean; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['ls-remote', '--', source, ...refs],
      // No prompt can hold the launch: a repository that wants a password fails at once.
      { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 4 << 20, env: { ...env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '/bin/false', SSH_ASKPASS: '/bin/false' } },
      (err, stdout, stderr) => {
        const timedOut = err !== null && (err as NodeJS.ErrnoException & { killed?: boolean }).killed === true;
        resolve({ ok: err === null, stdout: String(stdout), stderr: String(stderr), timedOut });
      },
    );
  });
}

/**
 * Checks the repository of a launch (see the module comment); throws LaunchValidationError naming
 * `repository.path`, `repository.url` or `repository.branch`. `env` is the environment git runs with.
 */
export async function checkRepository(repo: RepositoryRef, capabilities: RepositoryCheckCapabilities, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const target = repositoryCheckTarget(repo, capabilities);
  if (target === null) return;
  if (target.kind === 'path') {
    let isDir: boolean;
    try {
      isDir = statSync(target.source).isDirectory();
    } catch {
      throw new LaunchValidationError(target.field, `${target.source}: no such directory`);
    }
    if (!isDir) throw new LaunchValidationError(target.field, `${target.source} is a file, not a git repository`);
  }
  const refs = repo.branch !== undefined ? [`refs/heads/${repo.branch}`, `refs/tags/${repo.branch}`, `refs/tags/${repo.branch}^{}`] : ['HEAD'];
  const timeoutMs = target.kind === 'url' ? target.timeoutMs : TIMEOUT_MS.local;
  const result = await lsRemote(target.source, refs, timeoutMs, env);
  if (result.timedOut) throw new LaunchValidationError(target.field, `${target.source} did not answer within ${timeoutMs / 1000} s`);
  if (!result.ok) {
    const what = target.kind === 'path' ? 'is not a git repository git can clone' : 'cannot be read';
    throw new LaunchValidationError(target.field, `${target.source} ${what} (${gitReason(result.stderr)})`);
  }
  if (repo.branch !== undefined && !lsRemoteHasRef(result.stdout, repo.branch)) {
    throw new LaunchValidationError('repository.branch', `no branch or tag '${repo.branch}' in ${target.source}`);
  }
}
