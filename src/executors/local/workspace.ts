/**
 * The workspace of a local session: `<dataDir>/workspaces/<sessionId>/repo`, a clone of the
 * repository. Local paths are cloned with `git clone --local` rather than `git worktree add`: the
 * clone is independent (removing it never touches the user's repository, no worktree metadata or
 * branch locks are left in it), and `--local` hard-links the objects, so it is as cheap as a worktree.
 * @module
 */
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { sanitize } from '../../shared/sanitize.js';
import { LaunchError, type RepositorySpec } from '../executor.js';
import { STAGE } from './constants.js';

const CLONE_TIMEOUT_MS = 10 * 60_000;

function git(args: string[], opts: { cwd?: string; signal?: AbortSignal } = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      'git',
      args,
      {
        cwd: opts.cwd,
        timeout: CLONE_TIMEOUT_MS,
        maxBuffer: 4 * 1024 * 1024,
        signal: opts.signal,
        // never prompt for credentials: a launch must fail, not hang
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'echo' },
      },
      (err, stdout, stderr) => (err ? reject(Object.assign(err, { stderr })) : resolvePromise({ stdout, stderr })),
    );
  });
}

/** Checks the repository reference before anything is created; throws LaunchError(stage `workspace`). */
export function validateRepository(repo: RepositorySpec): { source: string; field: 'repository.url' | 'repository.path' } {
  const fail = (reason: string, message: string) => new LaunchError(STAGE.workspace, reason, message);
  if (repo.url !== undefined && repo.path !== undefined) throw fail('InvalidRepository', 'repository: cannot set both url and path');
  if (repo.path !== undefined) {
    const p = isAbsolute(repo.path) ? repo.path : resolve(repo.path);
    if (!existsSync(p)) throw fail('RepositoryNotFound', `repository.path: ${p} does not exist`);
    if (!statSync(p).isDirectory()) throw fail('RepositoryNotFound', `repository.path: ${p} is not a directory`);
    if (!existsSync(resolve(p, '.git')) && !existsSync(resolve(p, 'HEAD'))) {
      throw fail('NotAGitRepository', `repository.path: ${p} is not a git repository`);
    }
    return { source: p, field: 'repository.path' };
  }
  if (repo.url !== undefined) {
    if (repo.url.trim() === '') throw fail('InvalidRepository', 'repository.url: must not be empty');
    if (repo.url.startsWith('file://')) {
      const p = decodeURIComponent(new URL(repo.url).pathname);
      if (!existsSync(p)) throw fail('RepositoryNotFound', `repository.url: ${sanitize(repo.url)} does not exist`);
    }
    return { source: repo.url, field: 'repository.url' };
  }
  throw fail('InvalidRepository', 'repository: set url or path');
}

/** Clones the repository into `target` (which must not exist yet). */
export async function cloneRepository(repo: RepositorySpec, target: string, signal?: AbortSignal): Promise<void> {
  const { source, field } = validateRepository(repo);
  const args = ['clone', '--quiet'];
  if (field === 'repository.path') args.push('--local');
  if (repo.branch !== undefined) args.push('--branch', repo.branch);
  args.push('--', source, target);
  try {
    await git(args, { signal });
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim();
    const branchMissing = repo.branch !== undefined && /Remote branch .* not found/.test(stderr);
    throw new LaunchError(
      STAGE.workspace,
      branchMissing ? 'BranchNotFound' : 'CloneFailed',
      branchMissing
        ? `repository.branch: ${repo.branch} does not exist in ${sanitize(source)}`
        : `${field}: git clone of ${sanitize(source)} failed: ${sanitize(lastLines(stderr) || (err as Error).message)}`,
      { cause: err },
    );
  }
}

/** Removes a session dir (idempotent). */
export async function removeSessionDir(sessionDir: string): Promise<void> {
  await rm(sessionDir, { recursive: true, force: true, maxRetries: 3 });
}

function lastLines(text: string): string {
  return text.split('\n').filter((l) => l.trim() !== '').slice(-3).join(' | ');
}
