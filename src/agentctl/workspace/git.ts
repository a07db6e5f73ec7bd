/**
 * Git in the workspace: `git` is spawned with an argv (never a shell) as `git -C <workspace> …`.
 * Refs and paths from callers are checked first (no option injection, paths confined), and git's
 * own failures become `git_error` (422) carrying its sanitized stderr.
 * @module
 */
import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { z } from 'zod';
import { LIMITS, type GitCommitRequestSchema, type GitCommitResponse, type GitDiff, type GitLog, type GitStatus } from '../../protocol/index.js';
import type { HttpError } from '../../shared/http/index.js';
import { protocolError } from '../errors.js';
import { sanitize } from '../../shared/sanitize.js';
import { childEnv } from '../processes/child-env.js';
import { parsePorcelainV2 } from './git-status.js';
import type { Workspace } from './files.js';
import { confine } from './paths.js';

const GIT_TIMEOUT_MS = 60_000;

interface GitResult {
  readonly code: number | null;
  readonly stdout: Buffer;
  readonly stderr: string;
  /** stdout hit `maxStdout` and git was stopped. */
  readonly truncated: boolean;
}

interface RunOptions {
  readonly maxStdout?: number;
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Runs `git -C <root> <args>`; never throws for a non-zero exit (callers decide).
 *
 * - The environment is the one workspace processes get (`childEnv`): no `AGENTCTL_*` variable,
 *   above all not the bootstrap nonce, reaches git or the hooks and fsmonitor it may run.
 * - `safe.directory=<root>`: the workspace is often owned by another uid than agentctl's (a PVC,
 *   a bind mount); git would refuse it as "dubious ownership". The caller chose this workspace,
 *   so it is trusted for exactly this invocation, without touching any config file.
 * - `GIT_LITERAL_PATHSPECS`: confined paths are file names, never pathspec magic such as
 *   `:(top)x` or `:/`, which could reach past a workspace that is a subdirectory of a repository.
 */
function runGit(root: string, args: readonly string[], options: RunOptions = {}): Promise<GitResult> {
  const maxStdout = options.maxStdout ?? 64 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', `safe.directory=${root}`, '-C', root, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnv(process.env, {}, {
        ...options.env,
        GIT_TERMINAL_PROMPT: '0',
        GIT_OPTIONAL_LOCKS: '0',
        GIT_LITERAL_PATHSPECS: '1',
        GIT_PAGER: 'cat',
        LC_ALL: 'C',
      }),
      timeout: GIT_TIMEOUT_MS,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let truncated = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (truncated) return;
      if (outBytes + chunk.length > maxStdout) {
        out.push(chunk.subarray(0, maxStdout - outBytes));
        outBytes = maxStdout;
        truncated = true;
        child.kill('SIGKILL');
        return;
      }
      out.push(chunk);
      outBytes += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (errBytes < 64 * 1024) err.push(chunk);
      errBytes += chunk.length;
    });
    child.on('error', (e) => reject(protocolError('git_error', `cannot run git: ${e.message}`, { cause: e })));
    child.on('close', (code) => {
      resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8'), truncated });
    });
  });
}

function gitError(what: string, result: GitResult): HttpError {
  const detail = result.stderr.trim() || result.stdout.toString('utf8').trim() || `exit code ${result.code}`;
  return protocolError('git_error', sanitize(`git ${what} failed: ${detail}`));
}

async function mustRun(ws: Workspace, what: string, args: readonly string[], options?: RunOptions): Promise<GitResult> {
  const result = await runGit(ws.realRoot, args, options);
  if (result.code !== 0 && !result.truncated) throw gitError(what, result);
  return result;
}

/** A ref from the caller: no option injection, no whitespace or control characters. */
function checkRef(name: string, ref: string): string {
  const hasControl = [...ref].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
  if (ref === '' || ref.startsWith('-') || /\s/.test(ref) || hasControl || ref.length > 256) {
    throw protocolError('bad_request', `${name}: must be a git revision (no leading "-", no whitespace)`);
  }
  return ref;
}

export async function gitStatus(ws: Workspace): Promise<GitStatus> {
  const result = await mustRun(ws, 'status', ['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=all']);
  return parsePorcelainV2(result.stdout.toString('utf8'));
}

/**
 * `git diff` of the working tree against the index (`base` null: unstaged changes, as git shows
 * them) or against `base`. Against a base, untracked (not ignored) files count as added, the way
 * a reviewer sees "what the agent changed since base"; see `withUntrackedIndex`.
 */
export async function gitDiff(ws: Workspace, base: string | null, path: string | null): Promise<GitDiff> {
  const args = ['diff', '--no-color', '--no-ext-diff', '--end-of-options'];
  if (base !== null) args.push(checkRef('base', base));
  if (path !== null) args.push('--', (await confine(ws.realRoot, ws.declaredRoot, path, 'write')).rel);
  const run = (env?: Record<string, string>): Promise<GitResult> => mustRun(ws, 'diff', args, { maxStdout: LIMITS.maxDiffBytes, env });
  const result = base === null ? await run() : await withUntrackedIndex(ws, run);
  return { base, diff: result.stdout.toString('utf8'), truncated: result.truncated };
}

/**
 * Runs `fn` with `GIT_INDEX_FILE` pointing at a throwaway copy of the index in which every
 * untracked, non-ignored file is marked intent-to-add (`git add -N`), so `git diff <base>` lists
 * them as new files. The real index, and the object store, are left untouched.
 */
async function withUntrackedIndex<T>(ws: Workspace, fn: (env: Record<string, string>) => Promise<T>): Promise<T> {
  const indexPath = (await mustRun(ws, 'rev-parse', ['rev-parse', '--git-path', 'index'])).stdout.toString('utf8').trim();
  const realIndex = isAbsolute(indexPath) ? indexPath : join(ws.realRoot, indexPath);
  const dir = await mkdtemp(join(tmpdir(), 'agentctl-index-'));
  try {
    const env = { GIT_INDEX_FILE: join(dir, 'index') };
    await copyFile(realIndex, env.GIT_INDEX_FILE).catch((err: unknown) => {
      // A repository without an index yet (nothing staged ever) starts from an empty one.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    });
    await mustRun(ws, 'add -N', ['add', '--intent-to-add', '--', '.'], { env });
    return await fn(env);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function hasHead(ws: Workspace): Promise<boolean> {
  return (await runGit(ws.realRoot, ['rev-parse', '--verify', '--quiet', 'HEAD'])).code === 0;
}

const LOG_FIELDS = 5;

export async function gitLog(ws: Workspace, ref: string, limit: number): Promise<GitLog> {
  checkRef('ref', ref);
  if (ref === 'HEAD' && !(await hasHead(ws))) return { commits: [] };
  const result = await mustRun(ws, 'log', ['log', '-z', `--max-count=${limit}`, '--format=%H%x00%an%x00%ae%x00%aI%x00%s', '--end-of-options', ref, '--']);
  const parts = result.stdout.toString('utf8').split('\0');
  const commits: GitLog['commits'] = [];
  for (let i = 0; i + LOG_FIELDS <= parts.length; i += LOG_FIELDS) {
    const [sha, name, email, date, subject] = parts.slice(i, i + LOG_FIELDS) as [string, string, string, string, string];
    if (sha === '') break;
    commits.push({ sha: sha.replace(/^\n/, ''), author_name: name, author_email: email, date, subject });
  }
  return { commits };
}

export async function gitCommit(ws: Workspace, request: z.output<typeof GitCommitRequestSchema>): Promise<GitCommitResponse> {
  if (request.paths !== undefined && request.paths.length > 0) {
    const rels: string[] = [];
    for (const p of request.paths) rels.push((await confine(ws.realRoot, ws.declaredRoot, p, 'write')).rel);
    await mustRun(ws, 'add', ['add', '--all', '--', ...rels]);
  } else if (request.all) {
    await mustRun(ws, 'add', ['add', '--all']);
  }
  if (!request.allow_empty) {
    const staged = await runGit(ws.realRoot, ['diff', '--cached', '--quiet']);
    if (staged.code === 0) throw protocolError('conflict', 'nothing to commit: no staged changes');
    if (staged.code !== 1) throw gitError('diff --cached', staged);
  }
  const env: Record<string, string> = {};
  if (request.author !== undefined) {
    env['GIT_AUTHOR_NAME'] = request.author.name;
    env['GIT_AUTHOR_EMAIL'] = request.author.email;
    // The author also becomes the committer when the repository has no identity of its own.
    if ((await runGit(ws.realRoot, ['config', 'user.email'])).code !== 0) {
      env['GIT_COMMITTER_NAME'] = request.author.name;
      env['GIT_COMMITTER_EMAIL'] = request.author.email;
    }
  }
  const args = ['commit', '--quiet', '--no-edit', '--cleanup=verbatim', '-m', request.message];
  if (request.allow_empty) args.push('--allow-empty');
  await mustRun(ws, 'commit', args, { env });
  const head = await mustRun(ws, 'rev-parse', ['rev-parse', 'HEAD']);
  return { sha: head.stdout.toString('utf8').trim() };
}
